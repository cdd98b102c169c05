// The lax library's gather and scatters (jax/_src/lax/slicing.py: lax.gather, lax.scatter,
// lax.scatter_add, _mul, _min, _max).
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>

#include "ir/gather_params.h"
#include "ir/rules/gather_scatter.h"
#include "passes/lax/elementwise.h"
#include "passes/lax/emitter.h"

namespace cjax::lax_ops {

// lax.gather's fill value: none unless the mode is FILL_OR_DROP, where an unset one becomes NaN
// for floats, the smallest value for signed integers, the largest for unsigned ones, True for
// bool.
inline ParamValue gather_fill_value(GatherScatterMode mode, DType dtype,
                                    const std::optional<ParamValue>& fill_value) {
  if (mode != GatherScatterMode::fill_or_drop) return NoneParam{};
  if (fill_value && !fill_value->is_none()) return *fill_value;
  if (is_floating(dtype)) return std::numeric_limits<double>::quiet_NaN();
  if (dtype == DType::bool_) return true;
  const int bits = static_cast<int>(8 * itemsize(dtype));
  if (is_unsigned_integer(dtype))  // (u64's maximum does not fit an int param: its int64 one)
    return bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << bits) - 1;
  return bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
}

// lax.gather (mode None is PROMISE_IN_BOUNDS there: pass promise_in_bounds).
template <Emitter E>
value_t<E> gather(E& e, const value_t<E>& operand, const value_t<E>& indices,
                  const GatherDimensionNumbers& dn, const Shape& slice_sizes,
                  GatherScatterMode mode,
                  const std::optional<ParamValue>& fill_value = std::nullopt,
                  bool unique_indices = false, bool indices_are_sorted = false) {
  Params p{{"dimension_numbers", dn.to_param()},
           {"fill_value", gather_fill_value(mode, operand.aval().dtype, fill_value)},
           {"indices_are_sorted", indices_are_sorted},
           {"mode", to_param(mode)},
           {"slice_sizes", ParamValue::ints(slice_sizes)},
           {"unique_indices", unique_indices}};
  return emit1(e, "gather", {operand, indices}, std::move(p));
}

// lax.scatter / scatter_add / scatter_mul / scatter_min / scatter_max by primitive name
// ("scatter", "scatter-add", ...); mode None is FILL_OR_DROP there.
template <Emitter E>
value_t<E> scatter_op(E& e, std::string_view prim, const value_t<E>& operand,
                      const value_t<E>& indices, const value_t<E>& updates,
                      const ScatterDimensionNumbers& dn, GatherScatterMode mode,
                      bool indices_are_sorted = false, bool unique_indices = false) {
  const ParamValue update_jaxpr =
      prim == "scatter" ? ParamValue(NoneParam{})
                        : ParamValue(scatter_update_jaxpr(prim, operand.aval().dtype));
  Params p{{"dimension_numbers", dn.to_param()},
           {"indices_are_sorted", indices_are_sorted},
           {"mode", to_param(mode)},
           {"unique_indices", unique_indices},
           {"update_consts", ParamTuple{}},
           {"update_jaxpr", update_jaxpr}};
  return emit1(e, prim, {operand, indices, updates}, std::move(p));
}

template <Emitter E>
value_t<E> scatter_add(E& e, const value_t<E>& operand, const value_t<E>& indices,
                       const value_t<E>& updates, const ScatterDimensionNumbers& dn,
                       GatherScatterMode mode, bool indices_are_sorted = false,
                       bool unique_indices = false) {
  return scatter_op(e, "scatter-add", operand, indices, updates, dn, mode, indices_are_sorted,
                    unique_indices);
}

// The gather that reads back what a scatter with `dn` writes (and the scatter that a gather's
// transpose writes): the same dims under the other type's names.
inline GatherDimensionNumbers gather_of(const ScatterDimensionNumbers& dn) {
  return {
      dn.update_window_dims,    dn.inserted_window_dims,          dn.scatter_dims_to_operand_dims,
      dn.operand_batching_dims, dn.scatter_indices_batching_dims, dn.numpy_from};
}
inline ScatterDimensionNumbers scatter_of(const GatherDimensionNumbers& dn) {
  return {dn.offset_dims,           dn.collapsed_slice_dims,        dn.start_index_map,
          dn.operand_batching_dims, dn.start_indices_batching_dims, dn.numpy_from};
}

// The slice sizes of that gather: 1 at inserted and batching dims, else the updates' window.
inline Shape scatter_slice_sizes(const ScatterDimensionNumbers& dn, int64_t operand_rank,
                                 const Shape& updates_shape) {
  Shape sizes;
  size_t pos = 0;
  for (int64_t i = 0; i < operand_rank; ++i) {
    const bool one = std::find(dn.inserted_window_dims.begin(), dn.inserted_window_dims.end(), i) !=
                         dn.inserted_window_dims.end() ||
                     std::find(dn.operand_batching_dims.begin(), dn.operand_batching_dims.end(),
                               i) != dn.operand_batching_dims.end();
    sizes.push_back(one ? 1 : updates_shape[dn.update_window_dims[pos++]]);
  }
  return sizes;
}

}  // namespace cjax::lax_ops
