#include "models/gpt/train.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "io/npz.h"
#include "ir/errors.h"

namespace cjax::models::gpt {
namespace {

// Each leaf of `tree` under "<prefix><key path>".
template <class T>
void add_named_leaves(io::NamedBuffers& out, const std::string& prefix, const T& tree) {
  FlatTree flat = tree_flatten(tree);
  for (size_t i = 0; i < flat.leaves.size(); ++i)
    out.emplace_back(prefix + keystr(flat.paths[i]), flat.leaves[i].buffer());
}

// `like` with each leaf replaced by the buffer of the same name, checked against it.
template <class T>
T read_named_leaves(std::map<std::string, runtime::Buffer>& by_name, const std::string& prefix,
                    const T& like, const std::string& path) {
  FlatTree flat = tree_flatten(like);
  std::vector<Array> leaves;
  for (size_t i = 0; i < flat.leaves.size(); ++i) {
    const std::string name = prefix + keystr(flat.paths[i]);
    auto it = by_name.find(name);
    if (it == by_name.end())
      throw UsageError(fmt::format("{}: the checkpoint has no array '{}'", path, name));
    const ShapedArray want = flat.leaves[i].aval();
    const ShapedArray& got = it->second.aval();
    if (got.dtype != want.dtype || got.shape != want.shape)
      throw UsageError(fmt::format("{}: '{}' is {} in the checkpoint, but this model needs {}",
                                   path, name, got.str_short(), want.str_short()));
    leaves.push_back(Array::from_buffer(std::move(it->second)));
    by_name.erase(it);
  }
  return tree_unflatten(like, leaves);
}

}  // namespace

optim::GradientTransformation make_optimizer(const TrainOptions& o, const std::string& norm_axis) {
  if (o.steps <= 0 || o.batch <= 0 || o.warmup_steps < 0 || !(o.learning_rate > 0))
    throw UsageError("gpt: steps and batch must be positive, warmup_steps >= 0, the rate > 0");
  const int64_t decay_steps = std::max(o.steps, o.warmup_steps + 1);
  auto schedule = optim::warmup_cosine_decay_schedule(0.0, o.learning_rate, o.warmup_steps,
                                                      decay_steps, o.learning_rate * 0.1);
  return optim::chain({optim::clip_by_global_norm(o.clip_norm, norm_axis),
                       optim::adamw(schedule, 0.9, 0.95, 1e-8, o.weight_decay)});
}

TrainState init_train_state(const GptConfig& config, const optim::GradientTransformation& opt,
                            const Array& key) {
  TrainState s;
  s.params = init_gpt(config, key);
  s.opt_state = opt.init(s.params);
  return s;
}

StepFn make_train_step(const GptConfig& config, const optim::GradientTransformation& opt) {
  auto loss_fn = training_loss(config);
  auto step = [loss_fn, opt](const GptParams& p, const optim::OptState& s, const Array& tokens,
                             const Array& labels, const Array& key) {
    auto [loss, grads] = value_and_grad(loss_fn)(p, tokens, labels, key);
    auto [updates, next] = opt.update(grads, s, p);
    return std::tuple{optim::apply_updates(p, updates), next, loss};
  };
  return jit(step, donate_argnums(0, 1));
}

float train_step(const StepFn& step, TrainState& state, const Array& tokens, const Array& labels,
                 const Array& dropout_key) {
  auto [params, opt_state, loss] = step(state.params, state.opt_state, tokens, labels, dropout_key);
  state.params = std::move(params);
  state.opt_state = std::move(opt_state);
  ++state.step;
  return loss.item<float>();
}

void save_checkpoint(const std::string& path, const TrainState& state) {
  io::NamedBuffers arrays;
  add_named_leaves(arrays, "params", state.params);
  add_named_leaves(arrays, "opt_state", state.opt_state);
  arrays.emplace_back("step", array(state.step).buffer());
  io::save_npz(path, arrays);
}

TrainState load_checkpoint(const std::string& path, const TrainState& like) {
  std::map<std::string, runtime::Buffer> by_name;
  for (auto& [name, buffer] : io::load_npz(path)) by_name.emplace(name, std::move(buffer));
  TrainState s;
  s.params = read_named_leaves(by_name, "params", like.params, path);
  s.opt_state = read_named_leaves(by_name, "opt_state", like.opt_state, path);
  auto step = by_name.find("step");
  if (step == by_name.end() || step->second.aval().size() != 1 ||
      !is_integer(step->second.aval().dtype))
    throw UsageError(fmt::format("{}: the checkpoint has no integer scalar 'step'", path));
  s.step = Array::from_buffer(std::move(step->second)).item<int64_t>();
  by_name.erase(step);
  if (!by_name.empty())
    throw UsageError(
        fmt::format("{}: '{}' is not part of this model's state", path, by_name.begin()->first));
  return s;
}

}  // namespace cjax::models::gpt
