// shard_map over a mesh of processes, as jax.shard_map with check_vma=False, and the processes
// themselves (jax.distributed).
//
//   cjax::distributed::initialize();                       // under mpirun -np 4
//   cjax::Mesh mesh({4}, {"x"});                           // jax.sharding.Mesh(devices, ("x",))
//   auto total = cjax::shard_map([](const Array& block) { return lax::psum(block, "x"); },
//                                mesh, {P("x")}, {P()});
//   Array y = total(x);   // each process sums its quarter of x; every process gets the sum
//
// f is traced once on one device's blocks (each dimension a spec splits divided by its mesh
// axes' sizes), with the mesh's axes bound for the collectives (cjax/collectives.h), and staged
// as one `shard_map` eqn, printed as JAX prints it. Run, each process (one per device of the
// mesh, `mpirun -np <devices>`; device d is MPI rank d) takes its block of every argument, runs
// the body, and the blocks of each output are gathered over the axes its spec names, so every
// process holds whole outputs. An output whose spec leaves out a mesh axis must be equal across
// that axis (check_vma=False's contract: nothing checks it; the values of the processes at
// coordinate 0 of it are used). JAX's default check_vma=True (types that track which values vary
// across the mesh) is not supported.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cjax/autodiff_api.h"
#include "cjax/jit.h"
#include "cjax/vmap.h"
#include "ir/axis_env.h"
#include "ir/sharding.h"

namespace cjax {

namespace distributed {
// jax.distributed.initialize(): joins the processes mpirun started (MPI). Idempotent. Throws
// cjax::UnsupportedError in a build of cjax without MPI.
void initialize();
// This process's index and the number of processes (0 and 1 before initialize()).
int64_t process_index();
int64_t process_count();
}  // namespace distributed

// A mesh of devices (here: processes) with named axes, row-major: device d is MPI rank d.
class Mesh {
 public:
  Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names,
       SourceInfo src = std::source_location::current());
  const MeshAxes& axes() const { return axes_; }
  int64_t size() const { return axes_.device_count(); }

 private:
  MeshAxes axes_;
};

// One entry of a partition spec: not split (std::nullopt, JAX's None), split over one mesh axis
// ("x"), or over several ({"x", "y"}, the first the major one).
class SpecEntry {
 public:
  SpecEntry(std::nullopt_t) {}
  SpecEntry(const char* axis) : axes_{axis} {}
  SpecEntry(std::string axis) : axes_{std::move(axis)} {}
  SpecEntry(std::initializer_list<std::string> axes) : axes_(axes) {}
  const std::vector<std::string>& axes() const { return axes_; }

 private:
  std::vector<std::string> axes_;
};

// jax.sharding.PartitionSpec: P("x"), P(std::nullopt, "x"), P({"x", "y"}), P() (replicated).
// (Up to four entries; build a PartitionSpec's dims directly for more.)
PartitionSpec P();
PartitionSpec P(SpecEntry a);
PartitionSpec P(SpecEntry a, SpecEntry b);
PartitionSpec P(SpecEntry a, SpecEntry b, SpecEntry c);
PartitionSpec P(SpecEntry a, SpecEntry b, SpecEntry c, SpecEntry d);

// in_specs / out_specs: one spec per positional argument (per output leaf, in tree_flatten
// order), applied to every leaf of it; or one spec for all; or (Specs::per_leaf) one spec per
// leaf of all the arguments, in tree_flatten order, as JAX's in_specs written as a pytree of
// specs matching the arguments' (a model's weights, each split along its own dimension).
class Specs {
 public:
  Specs(PartitionSpec all) : all_(std::move(all)) {}
  Specs(std::initializer_list<PartitionSpec> each) : each_(each), per_item_(true) {}
  Specs(std::vector<PartitionSpec> each) : each_(std::move(each)), per_item_(true) {}
  static Specs per_leaf(std::vector<PartitionSpec> leaves) {
    Specs s(std::move(leaves));
    s.per_leaf_ = true;
    return s;
  }

  bool per_item() const { return per_item_; }
  bool per_leaf() const { return per_leaf_; }
  const PartitionSpec& all() const { return all_; }
  const std::vector<PartitionSpec>& each() const { return each_; }

 private:
  PartitionSpec all_;
  std::vector<PartitionSpec> each_;
  bool per_item_ = false;
  bool per_leaf_ = false;
};

namespace distributed {
// This process's block of `whole` under `spec` over `mesh` (no communication): how a program
// whose processes each start from the whole array (the same seed) keeps only its part.
Array block_of(const Array& whole, const Mesh& mesh, const PartitionSpec& spec,
               SourceInfo src = std::source_location::current());
// The whole array from every process's `block` under `spec` (an all_gather over the axes the
// spec names; every process of the mesh calls it): to check or save a sharded result.
Array gather_blocks(const Array& block, const Mesh& mesh, const PartitionSpec& spec,
                    SourceInfo src = std::source_location::current());
}  // namespace distributed

namespace detail {

struct ShardPlan {
  std::vector<PartitionSpec> leaf_specs;  // one per argument leaf
  std::vector<Array> blocks;              // abstract leaves of one device's blocks
};
// `given_blocks`: the leaves are already one device's blocks (ShardMapped::on_blocks).
ShardPlan plan_shard_map(const FlatArgs& fa, const Mesh& mesh, const Specs& in_specs,
                         const SourceInfo& src, bool given_blocks = false);
// Stages (or runs) the shard_map eqn of the traced body on the arguments' leaves.
std::vector<Array> run_shard_map(const ClosedTrace& f, const Mesh& mesh, const ShardPlan& plan,
                                 const Specs& out_specs, std::span<const Array> leaves,
                                 const SourceInfo& src);
// on_blocks's checks: every leaf concrete (not under a trace), the output blocks' shapes fit
// their specs.
void check_blocks_concrete(std::span<const Array> leaves, const SourceInfo& src);
void check_out_blocks(const std::vector<Array>& outs, const Mesh& mesh, const Specs& out_specs,
                      const SourceInfo& src);
// Runs `run` with the mesh in scope for its collectives (the processes meet first); an error on
// one process of several ends them all, as in a shard_map's body.
void run_on_mesh(const Mesh& mesh, const std::function<void()>& run);

}  // namespace detail

template <class F>
class ShardMapped {
 public:
  ShardMapped(F f, Mesh mesh, Specs in_specs, Specs out_specs, SourceInfo src,
              DonateArgnums donate = {})
      : f_(std::move(f)),
        mesh_(std::move(mesh)),
        in_specs_(std::move(in_specs)),
        out_specs_(std::move(out_specs)),
        src_(std::move(src)),
        on_blocks_(f_, std::move(donate)) {}

  // This shard_map whose on_blocks donates the blocks of these arguments (jit's donate_argnums:
  // their buffers are freed as the step reads them last, the Arrays deleted).
  ShardMapped donating(DonateArgnums donate) const {
    return ShardMapped(f_, mesh_, in_specs_, out_specs_, src_, std::move(donate));
  }

  template <class... Args>
  auto operator()(const Args&... args) const {
    auto call = detail::to_diff_args(std::make_tuple(args...));
    detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
    detail::ShardPlan plan = detail::plan_shard_map(fa, mesh_, in_specs_, src_);
    auto traced = trace_body(call, fa, plan);
    return tree_unflatten(traced.proto, detail::run_shard_map(traced.closed, mesh_, plan,
                                                              out_specs_, fa.primals, src_));
  }

  // Each process passes its own blocks of the arguments (the shapes the body sees) and gets its
  // own blocks of the outputs: nothing is split or gathered, so no process ever holds a whole
  // sharded array (JAX's arrays made with make_array_from_process_local_data, and the sharded
  // outputs of jit(shard_map)). Every process of the mesh calls it with the same program. The
  // body is jit-compiled with the mesh's axes bound, traced once per signature (cached as jit's
  // calls are). On concrete arrays only (not under jit or grad).
  template <class... Args>
  auto on_blocks(const Args&... args) const {
    auto call = detail::to_diff_args(std::make_tuple(args...));
    detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
    (void)detail::plan_shard_map(fa, mesh_, in_specs_, src_, true);  // checks the specs
    detail::check_blocks_concrete(fa.primals, src_);
    std::optional<decltype(on_blocks_(args...))> out;
    {
      const auto bound = bind_axes();
      detail::run_on_mesh(mesh_, [&] { out.emplace(on_blocks_(args...)); });
    }
    detail::check_out_blocks(tree_leaves(*out), mesh_, out_specs_, src_);
    return std::move(*out);
  }

 private:
  // The mesh's axes, bound for the collectives while in scope.
  std::vector<std::unique_ptr<AxisEnvScope>> bind_axes() const {
    std::vector<std::unique_ptr<AxisEnvScope>> bound;
    for (size_t i = 0; i < mesh_.axes().names.size(); ++i)
      bound.push_back(std::make_unique<AxisEnvScope>(mesh_.axes().names[i], mesh_.axes().sizes[i]));
    return bound;
  }
  // f traced on one device's blocks, with the mesh's axes bound.
  template <class Call>
  auto trace_body(const Call& call, const detail::FlatArgs& fa,
                  const detail::ShardPlan& plan) const {
    const auto bound = bind_axes();
    return detail::trace_call(f_, call, detail::with_leaves(fa, plan.blocks), "shard_map");
  }

  F f_;
  Mesh mesh_;
  Specs in_specs_, out_specs_;
  SourceInfo src_;
  Jitted<F> on_blocks_;  // the body, compiled for on_blocks
};

// jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=..., check_vma=False).
template <class F>
ShardMapped<std::decay_t<F>> shard_map(F&& f, Mesh mesh, Specs in_specs, Specs out_specs,
                                       SourceInfo src = std::source_location::current()) {
  return ShardMapped<std::decay_t<F>>(std::forward<F>(f), std::move(mesh), std::move(in_specs),
                                      std::move(out_specs), std::move(src));
}

}  // namespace cjax
