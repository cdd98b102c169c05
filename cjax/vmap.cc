#include "cjax/vmap.h"

#include <fmt/format.h>

#include <map>

#include "cjax/eval_jaxpr.h"
#include "ir/errors.h"

namespace cjax::detail {
namespace {

// JAX names a leaf by its place among the positional arguments: args[0], args[1]['w'], ...
std::string leaf_name(const FlatArgs& fa, size_t arg, size_t leaf) {
  return fmt::format("args[{}]{}", arg, keystr(fa.trees[arg].paths.at(leaf)));
}

// JAX's message when the mapped axes disagree: each size with one leaf that has it.
[[noreturn]] void inconsistent_sizes(const FlatArgs& fa, const std::vector<BatchDim>& dims,
                                     std::optional<int64_t> axis_size) {
  struct Seen {
    size_t count = 0;
    std::string example;
    int64_t axis = 0;
    size_t first = 0;
  };
  std::map<int64_t, Seen> sizes;
  size_t k = 0;
  for (size_t a = 0; a < fa.trees.size(); ++a)
    for (size_t l = 0; l < fa.num_leaves[a]; ++l, ++k) {
      if (!dims[k]) continue;
      const Array& x = fa.primals[k];
      Seen& s = sizes[x.shape()[size_t(*dims[k])]];
      if (s.count++ == 0) {
        s.example = leaf_name(fa, a, l) + " of type " + x.aval().str_short();
        s.axis = *dims[k];
        s.first = k;
      }
    }
  std::vector<std::pair<int64_t, Seen>> order(sizes.begin(), sizes.end());
  // Most common first; ties in the order the leaves come.
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second.count != y.second.count ? x.second.count > y.second.count
                                            : x.second.first < y.second.first;
  });
  std::string msg = "vmap got inconsistent sizes for array axes to be mapped:\n";
  if (axis_size) msg += fmt::format("  * the `axis_size` argument was {};\n", *axis_size);
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& [size, s] = order[i];
    msg += s.count == 1
               ? fmt::format("  * one axis had size {}: axis {} of {}", size, s.axis, s.example)
               : fmt::format("  * {} axes had size {}, e.g. axis {} of {}", s.count, size, s.axis,
                             s.example);
    msg += i + 1 < order.size() ? ";\n" : "";
  }
  throw UsageError(msg);
}

}  // namespace

VmapPlan plan_vmap(const FlatArgs& fa, const VmapAxes& in_axes, std::optional<int64_t> axis_size) {
  if (in_axes.per_item() && in_axes.each().size() != fa.trees.size())
    throw UsageError(fmt::format(
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
        "positional arguments passed to the function, but got len(in_axes)={}, len(args)={}",
        in_axes.each().size(), fa.trees.size()));
  VmapPlan plan;
  std::optional<int64_t> size;
  bool agree = true;
  size_t k = 0;
  for (size_t a = 0; a < fa.trees.size(); ++a) {
    const std::optional<int> axis = in_axes.per_item() ? in_axes.each()[a] : in_axes.all();
    for (size_t l = 0; l < fa.num_leaves[a]; ++l, ++k) {
      const Array& x = fa.primals.at(k);
      if (!x.defined())
        throw TypeError(fmt::format("vmap: {} is a null cjax::Array", leaf_name(fa, a, l)));
      if (!axis) {
        plan.leaf_dims.push_back(std::nullopt);
        plan.one_example.push_back(Array::abstract(x.aval()));
        continue;
      }
      const int64_t rank = x.ndim();
      const int64_t d = *axis < 0 ? *axis + rank : *axis;
      if (d < 0 || d >= rank)
        throw UsageError(fmt::format(
            "vmap was requested to map its argument along axis {}, which implies that its rank "
            "should be at least {}, but is only {} (its shape is {})",
            *axis, *axis >= 0 ? *axis + 1 : -*axis, rank, shape_str(x.shape())));
      plan.leaf_dims.push_back(d);
      const int64_t n = x.shape()[size_t(d)];
      if (size && *size != n) agree = false;
      size = size.value_or(n);
      Shape one = x.shape();
      one.erase(one.begin() + d);
      plan.one_example.push_back(Array::abstract(ShapedArray(x.dtype(), one, x.weak_type())));
    }
  }
  if (size && axis_size && *size != *axis_size) agree = false;
  if (!agree) inconsistent_sizes(fa, plan.leaf_dims, axis_size);
  if (!size && !axis_size)
    throw UsageError(
        "vmap must have at least one non-None value in in_axes or axis_size must be specified");
  plan.size = size.value_or(axis_size.value_or(0));
  return plan;
}

FlatArgs with_leaves(FlatArgs fa, std::span<const Array> leaves) {
  fa.primals.assign(leaves.begin(), leaves.end());
  size_t k = 0;
  for (size_t a = 0; a < fa.trees.size(); ++a)
    for (Array& leaf : fa.trees[a].leaves) leaf = leaves[k++];
  return fa;
}

std::vector<Array> run_vmap(const ClosedTrace& f, const VmapPlan& plan, const VmapAxes& out_axes,
                            const std::string& axis_name, std::span<const Array> leaves) {
  const size_t n_out = f.jaxpr.outvars.size();
  if (out_axes.per_item() && out_axes.each().size() != n_out)
    throw UsageError(
        fmt::format("vmap out_axes has {} entries, but the function returns {} "
                    "Array leaves",
                    out_axes.each().size(), n_out));
  std::vector<BatchDim> out_dims;
  if (out_axes.per_item())
    for (std::optional<int> d : out_axes.each()) out_dims.push_back(d);
  else
    out_dims.assign(n_out, out_axes.all());
  BatchedJaxpr batched =
      batch_jaxpr(f.jaxpr, plan.leaf_dims, BatchAxis{plan.size, axis_name}, out_dims);
  return eval_jaxpr(batched.jaxpr, f.consts, leaves);
}

}  // namespace cjax::detail
