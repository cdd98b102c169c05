// Reductions (jax/_src/numpy/reductions.py): sum, prod, max, min, any, all, mean, argmax, argmin.
#include <fmt/format.h>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"

namespace cjax::numpy {
namespace {

DType upcast_f16(DType t) {
  return t == DType::f16 || t == DType::bf16 ? DType::f32 : t;
}

// reductions._promote_integer_dtype (x64 disabled): small integers to the default int.
DType promote_integer_dtype(DType t) {
  if (t == DType::bool_) return default_int_dtype();
  if (is_unsigned_integer(t)) return itemsize(t) < 4 ? default_uint_dtype() : t;
  if (is_integer(t)) return itemsize(t) < 4 ? default_int_dtype() : t;
  return t;
}

using Reducer = Array (*)(const Array&, const std::vector<int64_t>&, SourceInfo);

struct ReductionSpec {
  const char* name;
  Reducer reducer;
  bool has_identity;
  bool numeric_preproc;   // bool inputs become ints first (sum, prod)
  bool upcast_f16;        // compute f16/bf16 in f32 (when no dtype is given)
  bool promote_integers;  // small integer results widen to the default int
  bool cast_to_bool;      // the input becomes bool first (any, all)
};

// reductions._reduction for the monoid reducers.
Array reduction(const ReductionSpec& spec, Array a, const Axis& axis, bool keepdims,
                std::optional<DType> dtype, const SourceInfo& src) {
  if (spec.cast_to_bool) a = lax::convert_element_type(a, DType::bool_, false, src);
  if (spec.numeric_preproc) {
    Array args[] = {a};
    a = detail::promote_dtypes_numeric(args, src)[0];
  }
  std::vector<int64_t> dims = detail::reduction_axes(spec.name, a, axis, src);
  if (!spec.has_identity)
    for (int64_t d : dims)
      if (a.shape()[d] < 1)
        throw_type_error(src, fmt::format("{}: zero-size array to reduction operation {} which "
                                          "has no identity",
                                          spec.name, spec.name));
  DType result_dtype = dtype.value_or(a.dtype());
  if (!dtype && spec.promote_integers) result_dtype = promote_integer_dtype(result_dtype);
  DType computation_dtype = spec.upcast_f16 && !dtype && is_floating(result_dtype)
                                ? upcast_f16(result_dtype)
                                : result_dtype;
  a = lax::convert_element_type(a, computation_dtype, false, src);
  Array result = spec.reducer(a, dims, src);
  if (keepdims) result = lax::expand_dims(result, dims, src);
  return lax::convert_element_type(result, dtype.value_or(result_dtype), false, src);
}

constexpr ReductionSpec kSum{"sum", lax::reduce_sum, true, true, true, true, false};
constexpr ReductionSpec kProd{"prod", lax::reduce_prod, true, true, true, true, false};
constexpr ReductionSpec kMax{"max", lax::reduce_max, false, false, false, false, false};
constexpr ReductionSpec kMin{"min", lax::reduce_min, false, false, false, false, false};
constexpr ReductionSpec kAny{"any", lax::reduce_or, true, false, false, false, true};
constexpr ReductionSpec kAll{"all", lax::reduce_and, true, false, false, false, true};

Array arg_reduction(const char* name, bool is_max, const Array& a, std::optional<int64_t> axis,
                    bool keepdims, const SourceInfo& src) {
  Array x = a;
  std::vector<int64_t> dims;
  int64_t ax;
  if (!axis) {
    for (int64_t i = 0; i < a.ndim(); ++i) dims.push_back(i);
    x = ravel(a, src);
    ax = 0;
  } else {
    dims = {*axis};
    ax = *axis;
  }
  ax = lax::canonicalize_axis(ax, x.ndim(), name, src);
  if (x.shape()[ax] == 0)
    throw_type_error(src, fmt::format("{}: attempt to get {} of an empty sequence", name, name));
  Array r = is_max ? lax::argmax(x, ax, default_int_dtype(), src)
                   : lax::argmin(x, ax, default_int_dtype(), src);
  return keepdims ? expand_dims(r, dims, src) : r;
}

}  // namespace

Array sum(const Array& a, Axis axis, bool keepdims, std::optional<DType> dtype, Loc src) {
  return reduction(kSum, a, axis, keepdims, dtype, src);
}
Array prod(const Array& a, Axis axis, bool keepdims, std::optional<DType> dtype, Loc src) {
  return reduction(kProd, a, axis, keepdims, dtype, src);
}
Array max(const Array& a, Axis axis, bool keepdims, Loc src) {
  return reduction(kMax, a, axis, keepdims, std::nullopt, src);
}
Array min(const Array& a, Axis axis, bool keepdims, Loc src) {
  return reduction(kMin, a, axis, keepdims, std::nullopt, src);
}

Array any(const Array& a, Axis axis, bool keepdims, Loc src) {
  return reduction(kAny, a, axis, keepdims, std::nullopt, src);
}
Array all(const Array& a, Axis axis, bool keepdims, Loc src) {
  return reduction(kAll, a, axis, keepdims, std::nullopt, src);
}

Array mean(const Array& a, Axis axis, bool keepdims, std::optional<DType> dtype, Loc src) {
  DType result_dtype = dtype.value_or(to_inexact_dtype(a.dtype()));
  DType computation_dtype =
      !dtype && is_floating(result_dtype) ? upcast_f16(result_dtype) : result_dtype;
  std::vector<int64_t> dims = detail::reduction_axes("mean", a, axis, src);
  double count = 1;
  for (int64_t d : dims) count *= static_cast<double>(a.shape()[d]);
  Array normalizer = lax::convert_element_type(count, computation_dtype, false, src);
  Array total = sum(a, axis, keepdims, computation_dtype, src);
  return astype(lax::div(total, normalizer, src), result_dtype, src);
}

Array argmax(const Array& a, std::optional<int64_t> axis, bool keepdims, Loc src) {
  return arg_reduction("argmax", true, a, axis, keepdims, src);
}
Array argmin(const Array& a, std::optional<int64_t> axis, bool keepdims, Loc src) {
  return arg_reduction("argmin", false, a, axis, keepdims, src);
}

Array sort(const Array& a, std::optional<int64_t> axis, bool stable, bool descending, Loc src) {
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    Array x = axis ? args[0] : ravel(args[0], src);
    const int64_t dim = lax::canonicalize_axis(axis.value_or(0), x.ndim(), "sort", src);
    Array sorted = lax::sort(x, dim, stable, src);
    return {descending ? lax::rev(sorted, {dim}, src) : sorted};
  };
  return detail::call_jitted("sort", impl, std::vector<Array>{a}, src)[0];
}

Array argsort(const Array& a, std::optional<int64_t> axis, bool stable, bool descending, Loc src) {
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    Array x = axis ? args[0] : ravel(args[0], src);
    const int64_t dim = lax::canonicalize_axis(axis.value_or(0), x.ndim(), "argsort", src);
    Array iota = lax::broadcasted_iota(default_int_dtype(), x.shape(), dim, src);
    // A stable descending sort reverses first, so that equal elements keep their order once the
    // indices are reversed back (as jnp.argsort does).
    if (descending && stable) {
      x = lax::rev(x, {dim}, src);
      iota = lax::rev(iota, {dim}, src);
    }
    Array indices = lax::sort({x, iota}, dim, stable, 1, src)[1];
    return {descending ? lax::rev(indices, {dim}, src) : indices};
  };
  return detail::call_jitted("argsort", impl, std::vector<Array>{a}, src)[0];
}

}  // namespace cjax::numpy
