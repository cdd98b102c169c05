// vmap, as jax.vmap: a function of one example becomes a function of a batch of them.
//
//   auto per_example = cjax::vmap(f);                      // every argument mapped along axis 0
//   auto g = cjax::vmap(f, {0, std::nullopt});             // x mapped, w shared (JAX's None)
//   auto h = cjax::vmap(f, 1, /*out_axes=*/-1);            // along axis 1, outputs batched last
//   auto k = cjax::vmap(f, std::nullopt, 0, std::nullopt, /*axis_size=*/8);  // 8 copies
//   auto n = cjax::vmap([](const Array& x) { return x / lax::psum(x, "i"); }, 0, 0, "i");
//
// f is traced once on one example's avals (the mapped axis removed), the trace is batched by
// the pass batch_jaxpr (passes/batching.h, a rule per primitive as JAX's), and the batched
// program runs on the whole arrays: eagerly on concrete arrays (compiled by the installed back
// end), or staged into the enclosing trace, so vmap composes with grad, jit, checkpoint and
// itself, and make_jaxpr(vmap(f)) prints what JAX prints. With an axis_name, f may use the
// collectives over it (lax::psum, axis_index, all_gather, ...; cjax/collectives.h): the axis is
// bound while f is traced, and batching turns each collective into array ops over the batch.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/autodiff_api.h"
#include "cjax/collectives.h"
#include "ir/axis_env.h"
#include "passes/batching.h"

namespace cjax {

// in_axes or out_axes: one axis for every argument (every output leaf), or one per positional
// argument (per output leaf, in tree_flatten order). An axis is an int (negative counts from the
// end) or std::nullopt (JAX's None: not mapped; an input is passed whole to every example, an
// output is one for all of them).
class VmapAxes {
 public:
  VmapAxes(int axis) : all_(axis) {}
  VmapAxes(std::nullopt_t) {}
  VmapAxes(std::initializer_list<std::optional<int>> each) : each_(each), per_item_(true) {}
  VmapAxes(std::vector<std::optional<int>> each) : each_(std::move(each)), per_item_(true) {}

  bool per_item() const { return per_item_; }
  std::optional<int> all() const { return all_; }
  const std::vector<std::optional<int>>& each() const { return each_; }

 private:
  std::optional<int> all_;
  std::vector<std::optional<int>> each_;
  bool per_item_ = false;
};

namespace detail {

struct VmapPlan {
  std::vector<BatchDim> leaf_dims;  // one per argument leaf, non-negative
  int64_t size = 0;
  std::vector<Array> one_example;  // abstract leaves of one example's avals, to trace f on
};
// Checks in_axes against the arguments (ranks, agreeing sizes; errors as JAX words them).
VmapPlan plan_vmap(const FlatArgs& fa, const VmapAxes& in_axes, std::optional<int64_t> axis_size);
// `fa` with its leaves replaced (in order).
FlatArgs with_leaves(FlatArgs fa, std::span<const Array> leaves);
// Batches the trace and runs it on the arguments' leaves.
std::vector<Array> run_vmap(const ClosedTrace& f, const VmapPlan& plan, const VmapAxes& out_axes,
                            const std::string& axis_name, std::span<const Array> leaves);

}  // namespace detail

template <class F>
class Vmapped {
 public:
  Vmapped(F f, VmapAxes in_axes, VmapAxes out_axes, std::optional<std::string> axis_name,
          std::optional<int64_t> axis_size)
      : f_(std::move(f)),
        in_axes_(std::move(in_axes)),
        out_axes_(std::move(out_axes)),
        axis_name_(std::move(axis_name).value_or("")),
        axis_size_(axis_size) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    auto call = detail::to_diff_args(std::make_tuple(args...));
    detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
    detail::VmapPlan plan = detail::plan_vmap(fa, in_axes_, axis_size_);
    std::optional<detail::AxisEnvScope> bound;  // the axis name, while f is traced
    if (!axis_name_.empty()) bound.emplace(axis_name_, plan.size);
    auto traced = detail::trace_call(f_, call, detail::with_leaves(fa, plan.one_example), "vmap");
    bound.reset();
    return tree_unflatten(traced.proto,
                          detail::run_vmap(traced.closed, plan, out_axes_, axis_name_, fa.primals));
  }

 private:
  F f_;
  VmapAxes in_axes_, out_axes_;
  std::string axis_name_;  // "" for none
  std::optional<int64_t> axis_size_;
};

// jax.vmap(f, in_axes, out_axes, axis_name, axis_size): `axis_name` names the batch axis for the
// collectives f uses; `axis_size` is needed when no input is mapped.
template <class F>
Vmapped<std::decay_t<F>> vmap(F&& f, VmapAxes in_axes = 0, VmapAxes out_axes = 0,
                              std::optional<std::string> axis_name = std::nullopt,
                              std::optional<int64_t> axis_size = std::nullopt) {
  return Vmapped<std::decay_t<F>>(std::forward<F>(f), std::move(in_axes), std::move(out_axes),
                                  std::move(axis_name), axis_size);
}

}  // namespace cjax
