#include "cjax/shard_map.h"

#include <fmt/format.h>

#include "cjax/backend.h"
#include "cjax/bind.h"
#include "ir/errors.h"
#include "runtime/distributed.h"
#include "runtime/distributed_blocks.h"
#include "runtime/interpreter.h"

namespace cjax {

namespace {

// A shard_map's body runs on the installed back end (compiled once, cached by its text), unless
// the interpreter is forced on this thread. A body the back end cannot compile is interpreted:
// compiling happens before any collective, so every process can fall back alike.
std::vector<runtime::Buffer> run_body(const Jaxpr& body, std::span<const runtime::Buffer> blocks) {
  std::shared_ptr<Backend> backend = current_backend();
  if (!backend || interpreter_forced()) return runtime::eval_jaxpr(body, blocks);
  std::shared_ptr<const PreparedProgram> program;
  try {
    program = backend->prepare(body);
  } catch (const UnsupportedError&) {
    return runtime::eval_jaxpr(body, blocks);
  }
  return program->run({}, blocks);
}
const bool kBodyRunnerInstalled = (runtime::distributed::set_shard_map_body_runner(run_body), true);

}  // namespace

namespace distributed {
void initialize() {
  runtime::distributed::initialize();
}
int64_t process_index() {
  return runtime::distributed::process_index();
}
int64_t process_count() {
  return runtime::distributed::process_count();
}
}  // namespace distributed

Mesh::Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names, SourceInfo src) {
  if (shape.size() != axis_names.size())
    throw UsageError(fmt::format("{}Mesh: {} axis sizes for {} axis names", location_prefix(src),
                                 shape.size(), axis_names.size()));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1)
      throw UsageError(fmt::format("{}Mesh: the axis '{}' has size {}; sizes must be positive",
                                   location_prefix(src), axis_names[i], shape[i]));
    for (size_t k = 0; k < i; ++k)
      if (axis_names[k] == axis_names[i])
        throw UsageError(fmt::format("{}Mesh: the axis name '{}' appears twice",
                                     location_prefix(src), axis_names[i]));
  }
  axes_ = MeshAxes{std::move(axis_names), std::move(shape)};
  int64_t devices = 1;
  for (int64_t s : axes_.sizes)
    if (__builtin_mul_overflow(devices, s, &devices) || devices > kMaxMeshDevices)
      throw UsageError(
          fmt::format("{}Mesh: more than {} devices", location_prefix(src), kMaxMeshDevices));
}

PartitionSpec P() {
  return {};
}
PartitionSpec P(SpecEntry a) {
  return PartitionSpec{{a.axes()}};
}
PartitionSpec P(SpecEntry a, SpecEntry b) {
  return PartitionSpec{{a.axes(), b.axes()}};
}
PartitionSpec P(SpecEntry a, SpecEntry b, SpecEntry c) {
  return PartitionSpec{{a.axes(), b.axes(), c.axes()}};
}
PartitionSpec P(SpecEntry a, SpecEntry b, SpecEntry c, SpecEntry d) {
  return PartitionSpec{{a.axes(), b.axes(), c.axes(), d.axes()}};
}

namespace detail {
namespace {

// The spec of each item: per_item lists one per item, else one for all.
std::vector<PartitionSpec> per_item(const Specs& specs, size_t n, const char* what,
                                    const SourceInfo& src) {
  if (!specs.per_item()) return std::vector<PartitionSpec>(n, specs.all());
  if (specs.each().size() != n)
    throw UsageError(fmt::format("{}shard_map: {} has {} specs, but there are {}",
                                 location_prefix(src), what, specs.each().size(), n));
  return specs.each();
}

// cjax::Error from the sharding helpers, as a TypeError at the caller's line.
template <class F>
auto at_caller(const SourceInfo& src, F&& f) {
  try {
    return f();
  } catch (const TypeError&) {
    throw;
  } catch (const Error& e) {
    throw_type_error(src, e.what());
  }
}

}  // namespace

ShardPlan plan_shard_map(const FlatArgs& fa, const Mesh& mesh, const Specs& in_specs,
                         const SourceInfo& src, bool given_blocks) {
  size_t leaves = 0;
  for (size_t n : fa.num_leaves) leaves += n;
  std::vector<PartitionSpec> specs;  // one per leaf
  if (in_specs.per_leaf()) {
    specs = per_item(in_specs, leaves, "in_specs (one per leaf)", src);
  } else {
    const std::vector<PartitionSpec> per_arg = per_item(in_specs, fa.trees.size(), "in_specs", src);
    for (size_t a = 0; a < fa.trees.size(); ++a)
      specs.insert(specs.end(), fa.num_leaves[a], per_arg[a]);
  }
  ShardPlan plan;
  for (size_t a = 0, i = 0; a < fa.trees.size(); ++a)
    for (size_t l = 0; l < fa.num_leaves[a]; ++l, ++i) {
      const Array& leaf = fa.primals[fa.offset[a] + l];
      const std::string what = fmt::format("shard_map: argument {}", a);
      const Shape local = at_caller(src, [&] {
        if (!given_blocks) return local_shape(leaf.shape(), specs[i], mesh.axes(), what);
        (void)global_shape(leaf.shape(), specs[i], mesh.axes(), what);  // checks the spec
        return leaf.shape();
      });
      plan.leaf_specs.push_back(specs[i]);
      plan.blocks.push_back(Array::abstract(ShapedArray(leaf.dtype(), local, leaf.weak_type())));
    }
  return plan;
}

namespace {

// The output specs, each checked against its block's shape (naming the output).
std::vector<PartitionSpec> checked_out_specs(const std::vector<Shape>& blocks, const Mesh& mesh,
                                             const Specs& out_specs, const SourceInfo& src) {
  std::vector<PartitionSpec> specs = per_item(out_specs, blocks.size(), "out_specs", src);
  for (size_t i = 0; i < blocks.size(); ++i)
    at_caller(src, [&] {
      return global_shape(blocks[i], specs[i], mesh.axes(), fmt::format("shard_map: output {}", i));
    });
  return specs;
}

}  // namespace

std::vector<Array> run_shard_map(const ClosedTrace& f, const Mesh& mesh, const ShardPlan& plan,
                                 const Specs& out_specs, std::span<const Array> leaves,
                                 const SourceInfo& src) {
  std::vector<Shape> blocks;
  for (const Atom& o : f.jaxpr.outvars) blocks.push_back(o.aval().shape);
  const std::vector<PartitionSpec> outs = checked_out_specs(blocks, mesh, out_specs, src);
  // Captured constants become leading operands, replicated (JAX's convert_constvars_jaxpr).
  auto body = std::make_shared<Jaxpr>(f.jaxpr);
  body->consts.clear();
  convert_constvars(*body);
  std::vector<PartitionSpec> ins(f.consts.size(), PartitionSpec{});
  ins.insert(ins.end(), plan.leaf_specs.begin(), plan.leaf_specs.end());
  std::vector<Array> operands(f.consts.begin(), f.consts.end());
  operands.insert(operands.end(), leaves.begin(), leaves.end());
  Params params{{"check_vma", false},
                {"in_specs", specs_param(ins)},
                {"jaxpr", JaxprRef(std::move(body))},
                {"mesh", mesh_param(mesh.axes())},
                {"newly_manual_axes", manual_axes_param(mesh.axes())},
                {"out_specs", specs_param(outs)}};
  return cjax::bind("shard_map", std::span<const Array>(operands), std::move(params), src);
}

void check_blocks_concrete(std::span<const Array> leaves, const SourceInfo& src) {
  for (const Array& a : leaves)
    if (!a.is_concrete())
      throw UsageError(fmt::format(
          "{}shard_map(...).on_blocks runs on concrete arrays, each process's own blocks; under "
          "jit, grad or vmap, call the shard_map itself on whole arrays",
          location_prefix(src)));
}

void check_out_blocks(const std::vector<Array>& outs, const Mesh& mesh, const Specs& out_specs,
                      const SourceInfo& src) {
  std::vector<Shape> blocks;
  for (const Array& o : outs) blocks.push_back(o.shape());
  (void)checked_out_specs(blocks, mesh, out_specs, src);
}

void run_on_mesh(const Mesh& mesh, const std::function<void()>& run) {
  runtime::distributed::MeshScope scope(mesh.axes());
  runtime::distributed::run_or_end_every_process(run);
}

}  // namespace detail

namespace distributed {

Array block_of(const Array& whole, const Mesh& mesh, const PartitionSpec& spec, SourceInfo src) {
  const Shape local = detail::at_caller(
      src, [&] { return local_shape(whole.shape(), spec, mesh.axes(), "distributed::block_of"); });
  runtime::distributed::check_mesh(mesh.axes());
  return Array::from_buffer(
      runtime::distributed::take_block(whole.buffer(), local, spec, mesh.axes(), process_index()),
      whole.weak_type());
}

Array gather_blocks(const Array& block, const Mesh& mesh, const PartitionSpec& spec,
                    SourceInfo src) {
  const Shape whole = detail::at_caller(src, [&] {
    return global_shape(block.shape(), spec, mesh.axes(), "distributed::gather_blocks");
  });
  runtime::distributed::MeshScope scope(mesh.axes());
  return Array::from_buffer(
      runtime::distributed::gather_blocks(block.buffer(), whole, spec, mesh.axes()),
      block.weak_type());
}

}  // namespace distributed
}  // namespace cjax
