#include "models/gpt/sharded.h"

#include <fmt/format.h>

#include <utility>

#include "ir/errors.h"

namespace cjax::models::gpt {
Parallelism parallelism_by_name(const std::string& name) {
  if (name == "data") return Parallelism::data;
  if (name == "fsdp") return Parallelism::fsdp;
  throw UsageError(fmt::format("gpt: unknown parallelism '{}' (data or fsdp)", name));
}

std::vector<PartitionSpec> state_specs(const std::vector<Array>& leaves, Parallelism mode,
                                       const std::string& axis) {
  std::vector<PartitionSpec> specs;
  for (const Array& leaf : leaves) {
    PartitionSpec spec;
    if (mode == Parallelism::fsdp && leaf.ndim() > 0) {
      spec.dims.assign(size_t(leaf.ndim()), {});
      spec.dims.back() = {axis};
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

namespace {

// Each array of the state replaced by f(array, its spec).
template <class F>
TrainState map_state(const TrainState& s, Parallelism mode, const std::string& axis, F f) {
  auto map = [&](const auto& tree) {
    std::vector<Array> leaves = tree_leaves(tree);
    const std::vector<PartitionSpec> specs = state_specs(leaves, mode, axis);
    for (size_t i = 0; i < leaves.size(); ++i) leaves[i] = f(leaves[i], specs[i]);
    return tree_unflatten(tree, leaves);
  };
  return TrainState{map(s.params), map(s.opt_state), s.step};
}

}  // namespace

TrainState ShardedTraining::shard(const TrainState& whole) const {
  return map_state(whole, mode, axis, [this](const Array& leaf, const PartitionSpec& spec) {
    return distributed::block_of(leaf, mesh, spec);
  });
}

TrainState ShardedTraining::gather(const TrainState& part) const {
  return map_state(part, mode, axis, [this](const Array& leaf, const PartitionSpec& spec) {
    return distributed::gather_blocks(leaf, mesh, spec);
  });
}

float ShardedTraining::step(TrainState& part, const Array& tokens, const Array& labels,
                            const Array& dropout_key) const {
  auto [params, opt_state, loss] =
      on_blocks(part.params, part.opt_state, tokens, labels, dropout_key);
  part.params = std::move(params);
  part.opt_state = std::move(opt_state);
  ++part.step;
  return loss.item<float>();
}

Jaxpr ShardedTraining::step_jaxpr(const TrainState& whole, int64_t batch) const {
  const ShapeDtype tokens{DType::i32, {batch, config.seq}};
  return make_jaxpr(on_whole, {"params", "opt_state", "tokens", "labels", "key"})(
      whole.params, whole.opt_state, tokens, tokens, random::PRNGKey(0));
}

ShardedTraining make_sharded_training(GptConfig config, const TrainOptions& options,
                                      Parallelism mode) {
  config.check();
  distributed::initialize();
  const int64_t n = distributed::process_count();
  if (options.batch % n != 0)
    throw UsageError(
        fmt::format("gpt: the batch {} does not split over {} processes", options.batch, n));
  if (mode == Parallelism::fsdp && config.d_model % n != 0)
    throw UsageError(
        fmt::format("gpt: FSDP splits the weights' last dimension (d_model {}), "
                    "which does not divide by {} processes",
                    config.d_model, n));
  const std::string axis = "x";
  if (mode == Parallelism::fsdp) config.fsdp_axis = axis;
  ShardedTraining t{config,
                    make_optimizer(options, mode == Parallelism::fsdp ? axis : ""),
                    Mesh({n}, {axis}),
                    mode,
                    axis,
                    {},
                    {}};
  auto body = [config, opt = t.opt, axis, mode, n](const GptParams& p, const optim::OptState& s,
                                                   const Array& tokens, const Array& labels,
                                                   const Array& key) {
    // Each process's rows draw their own dropout.
    const Array k = config.dropout > 0 ? random::fold_in(key, lax::axis_index(axis)) : key;
    auto [loss, grads] = value_and_grad(training_loss(config))(p, tokens, labels, k);
    // Each loss is its rows' mean: the batch's mean is their mean, and so is its gradient. Under
    // FSDP the gathers' transposes have summed the processes' gradients into each one's block.
    grads = tree_map(
        [&](const Array& g) {
          return mode == Parallelism::data ? lax::pmean(g, axis) : g / double(n);
        },
        grads);
    auto [updates, next] = opt.update(grads, s, p);
    return std::tuple{optim::apply_updates(p, updates), next, lax::pmean(loss, axis)};
  };
  // The specs, from the state's structure (init_gpt's and the optimizer's).
  const GptParams params = init_gpt(config, random::PRNGKey(0));
  const optim::OptState opt_state = t.opt.init(params);
  std::vector<PartitionSpec> state = state_specs(tree_leaves(params), mode, axis);
  for (const PartitionSpec& s : state_specs(tree_leaves(opt_state), mode, axis)) state.push_back(s);
  std::vector<PartitionSpec> ins = state, outs = state;
  ins.insert(ins.end(), {P(axis), P(axis), P()});
  outs.push_back(P());
  auto sharded = shard_map(body, t.mesh, Specs::per_leaf(ins), Specs(outs));
  // The step's old state is donated: its buffers freed as the step reads them last.
  t.on_blocks = [donating = sharded.donating(donate_argnums(0, 1))](
                    const GptParams& p, const optim::OptState& s, const Array& x, const Array& y,
                    const Array& key) { return donating.on_blocks(p, s, x, y, key); };
  t.on_whole = [sharded](const GptParams& p, const optim::OptState& s, const Array& x,
                         const Array& y, const Array& key) { return sharded(p, s, x, y, key); };
  return t;
}

}  // namespace cjax::models::gpt
