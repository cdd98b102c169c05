// jnp.quantile / jnp.percentile / jnp.median (jax/_src/numpy/reductions.py: quantile, _quantile
// without squash_nans, percentile, median), traced to the equations JAX emits: NaN-poisoned,
// sorted along the axis, the order statistics either side of q * (n - 1) gathered, and combined
// by the method.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <string>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"

namespace cjax::numpy {
namespace {

bool known_method(std::string_view method) {
  return method == "linear" || method == "lower" || method == "higher" || method == "midpoint" ||
         method == "nearest";
}

// The axes as the key of a jitted body: "None" or the listed axes.
std::string axis_key(const Axis& axis) {
  return axis.is_none() ? std::string("None") : fmt::format("{}", fmt::join(axis.axes(), ","));
}

// _quantile's reshaping of the array: the reduced axes gathered into one (the last, for several;
// the flattened array for None), with the shape `keepdims` restores at the end (empty: none).
struct QuantileLayout {
  Array a;
  int64_t axis = 0;
  std::vector<int64_t> keepdim;
};

QuantileLayout gather_reduced_axes(const Array& in, const Axis& axis, bool keepdims,
                                   const Loc& src) {
  QuantileLayout out{in, 0, {}};
  if (axis.is_none()) {
    if (keepdims) out.keepdim.assign(static_cast<size_t>(in.ndim()), 1);
    out.a = ravel(in, src);
    return out;
  }
  const int64_t nd = in.ndim();
  if (axis.axes().size() == 1) {
    out.axis = lax::canonicalize_axis(axis.axes()[0], nd, "quantile", src);
    return out;
  }
  std::vector<int64_t> axes;
  for (int64_t ax : axis.axes()) axes.push_back(lax::canonicalize_axis(ax, nd, "quantile", src));
  if (std::set<int64_t>(axes.begin(), axes.end()).size() != axes.size())
    throw_type_error(src, "quantile: repeated axis");
  out.keepdim = in.shape();
  for (int64_t ax : axes) out.keepdim[static_cast<size_t>(ax)] = 1;
  // The kept axes first, in order, by JAX's swaps; the reduced ones merged after them.
  std::vector<int64_t> dimensions(static_cast<size_t>(nd));
  std::iota(dimensions.begin(), dimensions.end(), 0);
  int64_t i = 0;
  Shape kept, touched;
  for (int64_t d = 0; d < nd; ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    (reduced ? touched : kept).push_back(in.shape()[static_cast<size_t>(d)]);
    if (!reduced)
      std::swap(dimensions[static_cast<size_t>(i++)], dimensions[static_cast<size_t>(d)]);
  }
  int64_t merged = 1;
  for (int64_t s : touched) merged *= s;
  kept.push_back(merged);
  std::vector<int64_t> identity(static_cast<size_t>(nd));
  std::iota(identity.begin(), identity.end(), 0);
  out.a = lax::reshape(
      in, kept,
      dimensions == identity ? std::nullopt : std::optional<std::vector<int64_t>>(dimensions), src);
  out.axis = out.a.ndim() - 1;
  return out;
}

Array quantile_body(const Array& a_in, const Array& q_in, const Axis& axis,
                    const std::string& method, bool keepdims, const Loc& src) {
  Array a = detail::promote_dtypes_inexact(std::vector<Array>{a_in}, src)[0];
  QuantileLayout layout = gather_reduced_axes(a, axis, keepdims, src);
  a = layout.a;
  const int64_t ax = layout.axis;
  Array q = q_in;
  const int64_t q_ndim = q.ndim();
  const Shape a_shape = a.shape();
  if (a_shape[static_cast<size_t>(ax)] == 0)
    throw_type_error(src, fmt::format("quantile: no elements along the reduced axes of {}",
                                      a_in.aval().str_short()));
  // Any NaN along the axis makes every quantile there NaN.
  a = where(any(lax::ne(a, a, src), Axis(ax), true, src), std::numeric_limits<double>::quiet_NaN(),
            a, src);
  a = lax::sort(a, ax, true, src);
  const DType qt = q.dtype();
  const double last = static_cast<double>(a_shape[static_cast<size_t>(ax)] - 1);
  q = lax::mul(q, Array::scalar(last, qt), src);
  Array low = lax::floor(q, src);
  Array high = lax::ceil(q, src);
  Array high_weight = lax::sub(q, low, src);
  Array low_weight = lax::sub(Array::scalar(1, qt), high_weight, src);
  low = lax::clamp(Array::scalar(0, qt), low, Array::scalar(last, qt), src);
  high = lax::clamp(Array::scalar(0, qt), high, Array::scalar(last, qt), src);
  low = lax::convert_element_type(low, default_int_dtype(), false, src);
  high = lax::convert_element_type(high, default_int_dtype(), false, src);

  std::vector<int64_t> slice_sizes = a_shape;
  slice_sizes[static_cast<size_t>(ax)] = 1;
  GatherDimensionNumbers dn;
  const int64_t offset_end = static_cast<int64_t>(a_shape.size()) + q_ndim - (keepdims ? 0 : 1);
  for (int64_t d = q_ndim; d < offset_end; ++d) dn.offset_dims.push_back(d);
  if (!keepdims) dn.collapsed_slice_dims = {ax};
  dn.start_index_map = {ax};
  const Array low_index = getitem(low, {ellipsis, newaxis}, src);
  const Array low_value = lax::gather(a, low_index, dn, slice_sizes, {}, src);
  const Array high_index = getitem(high, {ellipsis, newaxis}, src);
  const Array high_value = lax::gather(a, high_index, dn, slice_sizes, {}, src);
  if (q_ndim == 1) {
    low_weight = lax::broadcast_in_dim(low_weight, low_value.shape(), {0}, src);
    high_weight = lax::broadcast_in_dim(high_weight, high_value.shape(), {0}, src);
  }

  Array result;
  if (method == "linear") {
    const Array from_low = lax::mul(astype(low_value, qt, src), low_weight, src);
    const Array from_high = lax::mul(astype(high_value, qt, src), high_weight, src);
    result = lax::add(from_low, from_high, src);
  } else if (method == "lower") {
    result = low_value;
  } else if (method == "higher") {
    result = high_value;
  } else if (method == "nearest") {
    const Array pred = lax::le(high_weight, Array::scalar(0.5, high_weight.dtype()), src);
    result = lax::select(pred, low_value, high_value, src);
  } else {  // midpoint
    result =
        lax::mul(lax::add(low_value, high_value, src), Array::scalar(0.5, low_value.dtype()), src);
  }
  if (keepdims && !layout.keepdim.empty()) {
    Shape shape = layout.keepdim;
    if (q_ndim > 0) shape.insert(shape.begin(), q.shape()[0]);
    result = reshape(result, shape, src);
  }
  return lax::convert_element_type(result, a.dtype(), false, src);
}

void check_quantile_args(std::string_view op, const Array& q, std::string_view method,
                         const Loc& src) {
  if (!known_method(method))
    throw_type_error(src, fmt::format("{}: method can only be 'linear', 'lower', 'higher', "
                                      "'midpoint', or 'nearest', not '{}'",
                                      op, method));
  if (q.ndim() > 1)
    throw_type_error(
        src, fmt::format("{}: q must be have rank <= 1, got shape {}", op, q.aval().str_short()));
}

}  // namespace

Array quantile(const Array& a, const Array& q, Axis axis, std::string_view method, bool keepdims,
               Loc src) {
  check_quantile_args("quantile", q, method, src);
  if (!is_floating(q.dtype()))
    throw_type_error(
        src, fmt::format("quantile: q must be floating point, got {}", q.aval().str_short()));
  auto impl = [=, m = std::string(method)](std::span<const Array> args) -> std::vector<Array> {
    return {quantile_body(args[0], args[1], axis, m, keepdims, src)};
  };
  return detail::call_jitted(
      "quantile", impl, std::vector<Array>{a, q}, src,
      fmt::format("axis={} method={} keepdims={}", axis_key(axis), method, keepdims))[0];
}

Array percentile(const Array& a, const Array& q, Axis axis, std::string_view method, bool keepdims,
                 Loc src) {
  check_quantile_args("percentile", q, method, src);
  auto impl = [=, m = std::string(method)](std::span<const Array> args) -> std::vector<Array> {
    const Array fraction =
        true_divide(detail::promote_dtypes_inexact(args.subspan(1, 1), src)[0], 100, src);
    return {quantile(args[0], fraction, axis, m, keepdims, src)};
  };
  return detail::call_jitted(
      "percentile", impl, std::vector<Array>{a, q}, src,
      fmt::format("axis={} method={} keepdims={}", axis_key(axis), method, keepdims))[0];
}

Array median(const Array& a, Axis axis, bool keepdims, Loc src) {
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    return {quantile(args[0], 0.5, axis, "midpoint", keepdims, src)};
  };
  return detail::call_jitted("median", impl, std::vector<Array>{a}, src,
                             fmt::format("axis={} keepdims={}", axis_key(axis), keepdims))[0];
}

}  // namespace cjax::numpy
