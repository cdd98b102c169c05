// jnp.quantile, percentile, median and their nan- forms (jax/_src/numpy/reductions.py: quantile,
// nanquantile, _quantile, percentile, median, ...), traced to the equations JAX emits: sorted
// along the axis (NaN-poisoned, or with NaNs sorted last and not counted), the order statistics
// either side of q * (n - 1) read, and combined by the method.
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

// The two order statistics either side of each quantile and the weight of the upper one.
struct OrderStatistics {
  Array low_value, high_value, low_weight, high_weight;
};

// _quantile without squash_nans: any NaN along the axis makes every quantile there NaN; the
// statistics sit at q * (n - 1) of the sorted axis, gathered along it.
OrderStatistics nan_poisoned_statistics(Array a, Array q, int64_t ax, bool keepdims,
                                        const Loc& src) {
  const int64_t q_ndim = q.ndim();
  const Shape a_shape = a.shape();
  a = where(any(lax::ne(a, a, src), Axis(ax), true, src), std::numeric_limits<double>::quiet_NaN(),
            a, src);
  a = lax::sort(a, ax, true, src);
  const DType qt = q.dtype();
  const double last = static_cast<double>(a_shape[static_cast<size_t>(ax)] - 1);
  q = lax::mul(q, Array::scalar(last, qt), src);
  Array low = lax::floor(q, src);
  Array high = lax::ceil(q, src);
  OrderStatistics s;
  s.high_weight = lax::sub(q, low, src);
  s.low_weight = lax::sub(Array::scalar(1, qt), s.high_weight, src);
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
  s.low_value = lax::gather(a, getitem(low, {ellipsis, newaxis}, src), dn, slice_sizes, {}, src);
  s.high_value = lax::gather(a, getitem(high, {ellipsis, newaxis}, src), dn, slice_sizes, {}, src);
  if (q_ndim == 1) {
    s.low_weight = lax::broadcast_in_dim(s.low_weight, s.low_value.shape(), {0}, src);
    s.high_weight = lax::broadcast_in_dim(s.high_weight, s.high_value.shape(), {0}, src);
  }
  return s;
}

// _quantile with squash_nans (nanquantile): NaNs sort to the end and are not counted, so each
// row's statistics sit at q * (count - 1) of its own non-NaN prefix; they are read by NumPy
// indexing with an iota per kept axis and the position along the reduced one.
OrderStatistics nan_skipping_statistics(Array a, Array q, int64_t ax, bool keepdims,
                                        const Loc& src) {
  const int64_t q_ndim = q.ndim();
  const Shape q_shape = q.shape();
  a = where(lax::ne(a, a, src), std::numeric_limits<double>::quiet_NaN(), a, src);
  a = lax::sort(a, ax, true, src);
  Array counts = sum(lax::bitwise_not(lax::ne(a, a, src), src), Axis(ax), keepdims, q.dtype(), src);
  const Shape after_reduction = counts.shape();
  const int64_t reduced_rank = static_cast<int64_t>(after_reduction.size());
  std::vector<int64_t> q_dims, count_dims;
  for (int64_t d = q_ndim; d < reduced_rank + q_ndim; ++d) q_dims.push_back(d);
  for (int64_t d = 0; d < q_ndim; ++d) count_dims.push_back(d);
  q = lax::expand_dims(q, q_dims, src);
  counts = lax::expand_dims(counts, count_dims, src);
  const DType qt = q.dtype();
  q = lax::mul(q, lax::sub(counts, Array::scalar(1, qt), src), src);
  Array low = lax::floor(q, src);
  Array high = lax::ceil(q, src);
  OrderStatistics s;
  s.high_weight = lax::sub(q, low, src);
  s.low_weight = lax::sub(Array::scalar(1, qt), s.high_weight, src);
  low = lax::max(Array::scalar(0, qt), lax::min(low, subtract(counts, 1, src), src), src);
  high = lax::max(Array::scalar(0, qt), lax::min(high, subtract(counts, 1, src), src), src);
  low = lax::convert_element_type(low, default_int_dtype(), false, src);
  high = lax::convert_element_type(high, default_int_dtype(), false, src);

  Shape out_shape = q_shape;
  out_shape.insert(out_shape.end(), after_reduction.begin(), after_reduction.end());
  std::vector<Index> index;
  for (int64_t d = 0; d < reduced_rank; ++d)
    index.emplace_back(lax::broadcasted_iota(default_int_dtype(), out_shape, d + q_ndim, src));
  const auto at = index.begin() + static_cast<std::ptrdiff_t>(ax);
  if (keepdims)
    *at = low;
  else
    index.insert(at, low);
  s.low_value = getitem(a, index, src);
  index[static_cast<size_t>(ax)] = high;
  s.high_value = getitem(a, index, src);
  return s;
}

Array quantile_body(const Array& a_in, const Array& q_in, const Axis& axis,
                    const std::string& method, bool keepdims, bool squash_nans, const Loc& src) {
  Array a = detail::promote_dtypes_inexact(std::vector<Array>{a_in}, src)[0];
  QuantileLayout layout = gather_reduced_axes(a, axis, keepdims, src);
  a = layout.a;
  const int64_t ax = layout.axis;
  const Array& q = q_in;
  if (a.shape()[static_cast<size_t>(ax)] == 0)
    throw_type_error(src, fmt::format("quantile: no elements along the reduced axes of {}",
                                      a_in.aval().str_short()));
  const OrderStatistics s = squash_nans ? nan_skipping_statistics(a, q, ax, keepdims, src)
                                        : nan_poisoned_statistics(a, q, ax, keepdims, src);
  const DType qt = q.dtype();
  Array result;
  if (method == "linear") {
    const Array from_low = lax::mul(astype(s.low_value, qt, src), s.low_weight, src);
    const Array from_high = lax::mul(astype(s.high_value, qt, src), s.high_weight, src);
    result = lax::add(from_low, from_high, src);
  } else if (method == "lower") {
    result = s.low_value;
  } else if (method == "higher") {
    result = s.high_value;
  } else if (method == "nearest") {
    const Array pred = lax::le(s.high_weight, Array::scalar(0.5, s.high_weight.dtype()), src);
    result = lax::select(pred, s.low_value, s.high_value, src);
  } else {  // midpoint
    result = lax::mul(lax::add(s.low_value, s.high_value, src),
                      Array::scalar(0.5, s.low_value.dtype()), src);
  }
  if (keepdims && !layout.keepdim.empty()) {
    Shape shape = layout.keepdim;
    if (q.ndim() > 0) shape.insert(shape.begin(), q.shape()[0]);
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

// The jitted jnp function `name` over _quantile (nanquantile: squash_nans).
Array jitted_quantile(const char* name, const Array& a, const Array& q, const Axis& axis,
                      std::string_view method, bool keepdims, bool squash_nans, const Loc& src) {
  check_quantile_args(name, q, method, src);
  if (!is_floating(q.dtype()))
    throw_type_error(
        src, fmt::format("{}: q must be floating point, got {}", name, q.aval().str_short()));
  auto impl = [=, m = std::string(method)](std::span<const Array> args) -> std::vector<Array> {
    return {quantile_body(args[0], args[1], axis, m, keepdims, squash_nans, src)};
  };
  return detail::call_jitted(
      name, impl, std::vector<Array>{a, q}, src,
      fmt::format("axis={} method={} keepdims={}", axis_key(axis), method, keepdims))[0];
}

// jnp.percentile / nanpercentile: q / 100 through `quantile_fn`, jitted as `name`.
template <class QuantileFn>
Array jitted_percentile(const char* name, QuantileFn quantile_fn, const Array& a, const Array& q,
                        const Axis& axis, std::string_view method, bool keepdims, const Loc& src) {
  check_quantile_args(name, q, method, src);
  auto impl = [=, m = std::string(method)](std::span<const Array> args) -> std::vector<Array> {
    const Array fraction =
        true_divide(detail::promote_dtypes_inexact(args.subspan(1, 1), src)[0], 100, src);
    return {quantile_fn(args[0], fraction, axis, m, keepdims, src)};
  };
  return detail::call_jitted(
      name, impl, std::vector<Array>{a, q}, src,
      fmt::format("axis={} method={} keepdims={}", axis_key(axis), method, keepdims))[0];
}

// jnp.median / nanmedian: the midpoint quantile 0.5 through `quantile_fn`, jitted as `name`.
template <class QuantileFn>
Array jitted_median(const char* name, QuantileFn quantile_fn, const Array& a, const Axis& axis,
                    bool keepdims, const Loc& src) {
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    return {quantile_fn(args[0], 0.5, axis, "midpoint", keepdims, src)};
  };
  return detail::call_jitted(name, impl, std::vector<Array>{a}, src,
                             fmt::format("axis={} keepdims={}", axis_key(axis), keepdims))[0];
}

}  // namespace

Array quantile(const Array& a, const Array& q, Axis axis, std::string_view method, bool keepdims,
               Loc src) {
  return jitted_quantile("quantile", a, q, axis, method, keepdims, false, src);
}

Array nanquantile(const Array& a, const Array& q, Axis axis, std::string_view method, bool keepdims,
                  Loc src) {
  return jitted_quantile("nanquantile", a, q, axis, method, keepdims, true, src);
}

Array percentile(const Array& a, const Array& q, Axis axis, std::string_view method, bool keepdims,
                 Loc src) {
  return jitted_percentile("percentile", quantile, a, q, axis, method, keepdims, src);
}

Array nanpercentile(const Array& a, const Array& q, Axis axis, std::string_view method,
                    bool keepdims, Loc src) {
  return jitted_percentile("nanpercentile", nanquantile, a, q, axis, method, keepdims, src);
}

Array median(const Array& a, Axis axis, bool keepdims, Loc src) {
  return jitted_median("median", quantile, a, axis, keepdims, src);
}

Array nanmedian(const Array& a, Axis axis, bool keepdims, Loc src) {
  return jitted_median("nanmedian", nanquantile, a, axis, keepdims, src);
}

}  // namespace cjax::numpy
