#include "cjax/lax.h"

#include <fmt/format.h>

#include <numeric>
#include <set>

#include "cjax/bind.h"
#include "cjax/numpy.h"
#include "cjax/trace_emitter.h"
#include "ir/errors.h"
#include "passes/lax/lax.h"

// Each function is the lax library's (passes/lax/lax.h) over a TraceEmitter at the caller's
// location; only the argument checks that name that location are written here.
namespace cjax::lax {
namespace {

std::string ints_text(const std::vector<int64_t>& xs) {
  return shape_str(xs);
}

// lax.full's check, which full_like reaches too.
void check_scalar_fill(const Array& fill_value, const SourceInfo& src) {
  if (fill_value.ndim() != 0)
    throw_type_error(src, fmt::format("full must be called with scalar fill_value, got "
                                      "fill_value.shape {}",
                                      shape_str(fill_value.shape())));
}

}  // namespace

int64_t canonicalize_axis(int64_t axis, int64_t rank, std::string_view op, const SourceInfo& src) {
  if (axis < -rank || axis >= rank)
    throw_type_error(
        src, fmt::format("{}: axis {} is out of bounds for an array of rank {}", op, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

Array convert_element_type(const Array& x, DType new_dtype, bool weak_type, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::convert_element_type(e, x, new_dtype, weak_type);
}

Array neg(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::neg(e, x);
}
Array sign(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::sign(e, x);
}
Array abs(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::abs(e, x);
}
Array floor(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::floor(e, x);
}
Array ceil(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::ceil(e, x);
}
Array exp(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::exp(e, x);
}
Array exp2(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::exp2(e, x);
}
Array expm1(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::expm1(e, x);
}
Array log(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::log(e, x);
}
Array log1p(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::log1p(e, x);
}
Array sin(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::sin(e, x);
}
Array cos(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::cos(e, x);
}
Array tan(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::tan(e, x);
}
Array tanh(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::tanh(e, x);
}
Array logistic(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::logistic(e, x);
}
Array sqrt(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::sqrt(e, x);
}
Array rsqrt(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::rsqrt(e, x);
}
Array cbrt(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::cbrt(e, x);
}
Array asin(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::asin(e, x);
}
Array acos(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::acos(e, x);
}
Array atan(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::atan(e, x);
}
Array sinh(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::sinh(e, x);
}
Array cosh(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::cosh(e, x);
}
Array asinh(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::asinh(e, x);
}
Array acosh(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::acosh(e, x);
}
Array atanh(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::atanh(e, x);
}
Array erf(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::erf(e, x);
}
Array erfc(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::erfc(e, x);
}
Array erf_inv(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::erf_inv(e, x);
}
Array stop_gradient(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::stop_gradient(e, x);
}
Array square(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::square(e, x);
}
Array bitwise_not(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::bitwise_not(e, x);
}
Array is_finite(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::is_finite(e, x);
}
Array integer_pow(const Array& x, int64_t y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::integer_pow(e, x, y);
}

Array add(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::add(e, x, y);
}
Array sub(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::sub(e, x, y);
}
Array mul(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::mul(e, x, y);
}
Array div(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::div(e, x, y);
}
Array rem(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::rem(e, x, y);
}
Array pow(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::pow(e, x, y);
}
Array max(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::max(e, x, y);
}
Array min(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::min(e, x, y);
}
Array atan2(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::atan2(e, x, y);
}
Array nextafter(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::nextafter(e, x, y);
}
Array clamp(const Array& min, const Array& x, const Array& max, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::clamp(e, min, x, max);
}
Array bitwise_and(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::bitwise_and(e, x, y);
}
Array bitwise_or(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::bitwise_or(e, x, y);
}
Array bitwise_xor(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::bitwise_xor(e, x, y);
}
Array shift_left(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::shift_left(e, x, y);
}
Array shift_right_logical(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::shift_right_logical(e, x, y);
}
Array shift_right_arithmetic(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::shift_right_arithmetic(e, x, y);
}
Array population_count(const Array& x, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::population_count(e, x);
}
Array bitcast_convert_type(const Array& x, DType new_dtype, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::bitcast_convert_type(e, x, new_dtype);
}
Array eq(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::eq(e, x, y);
}
Array ne(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::ne(e, x, y);
}
Array lt(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::lt(e, x, y);
}
Array le(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::le(e, x, y);
}
Array gt(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::gt(e, x, y);
}
Array ge(const Array& x, const Array& y, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::ge(e, x, y);
}

Array select_n(const Array& which, std::span<const Array> cases, SourceInfo src) {
  if (cases.empty()) throw_type_error(src, "select_n: at least one case is required");
  TraceEmitter e(src);
  return lax_ops::select_n(e, which, std::vector<Array>(cases.begin(), cases.end()));
}

Array select(const Array& pred, const Array& on_true, const Array& on_false, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::select(e, pred, on_true, on_false);
}

Array broadcast_in_dim(const Array& x, const Shape& shape, const std::vector<int64_t>& dims,
                       SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::broadcast_in_dim(e, x, shape, dims);
}

Array broadcast(const Array& x, const Shape& sizes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::broadcast(e, x, sizes);
}

Array broadcast_to_rank(const Array& x, int64_t rank, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::broadcast_to_rank(e, x, rank);
}

Array broadcast_to(const Array& x, const Shape& shape, SourceInfo src) {
  const Shape& xs = x.shape();
  if (xs == shape) return x;
  auto fail = [&] {
    throw_type_error(src,
                     fmt::format("broadcast_to: incompatible types for broadcasting: input "
                                 "type={} and requested type={}",
                                 x.aval().str_short(), ShapedArray(x.dtype(), shape).str_short()));
  };
  if (shape.size() < xs.size()) fail();
  size_t nlead = shape.size() - xs.size();
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] != 1 && xs[i] != shape[nlead + i]) fail();
  std::vector<int64_t> dims(xs.size());
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(nlead));
  return broadcast_in_dim(x, shape, dims, src);
}

Array reshape(const Array& x, const Shape& new_sizes,
              std::optional<std::vector<int64_t>> dimensions, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reshape(e, x, new_sizes, dimensions);
}

Array transpose(const Array& x, const std::vector<int64_t>& permutation, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::transpose(e, x, permutation);
}

Array squeeze(const Array& x, const std::vector<int64_t>& dimensions, SourceInfo src) {
  std::vector<int64_t> dims;
  for (int64_t d : dimensions) dims.push_back(canonicalize_axis(d, x.ndim(), "squeeze", src));
  TraceEmitter e(src);
  return lax_ops::squeeze(e, x, std::move(dims));
}

Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions, SourceInfo src) {
  int64_t ndim_out = x.ndim() + static_cast<int64_t>(dimensions.size());
  std::set<int64_t> dims;
  for (int64_t d : dimensions) {
    int64_t c = canonicalize_axis(d, ndim_out, "expand_dims", src);
    if (!dims.insert(c).second)
      throw_type_error(src, fmt::format("expand_dims: repeated axis in {}", ints_text(dimensions)));
  }
  TraceEmitter e(src);
  return lax_ops::expand_dims(e, x, std::vector<int64_t>(dims.begin(), dims.end()));
}

Array concatenate(std::span<const Array> operands, int64_t dimension, SourceInfo src) {
  if (operands.empty())
    throw_type_error(src, "concatenate: requires a non-empty sequence of arrays");
  TraceEmitter e(src);
  return lax_ops::concatenate(e, std::vector<Array>(operands.begin(), operands.end()), dimension);
}

Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::broadcasted_iota(e, dtype, shape, dimension);
}

Array iota(DType dtype, int64_t size, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::iota(e, dtype, size);
}

Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype,
           SourceInfo src) {
  check_scalar_fill(fill_value, src);
  TraceEmitter e(src);
  return lax_ops::full(e, shape, fill_value, dtype);
}

Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype,
                std::optional<Shape> shape, SourceInfo src) {
  check_scalar_fill(fill_value, src);
  TraceEmitter e(src);
  return lax_ops::full_like(e, x, fill_value, dtype, std::move(shape));
}

Array slice(const Array& x, const std::vector<int64_t>& start_indices,
            const std::vector<int64_t>& limit_indices, std::optional<std::vector<int64_t>> strides,
            SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::slice(e, x, start_indices, limit_indices, strides);
}

namespace {

// jax.lax.slicing._dynamic_slice_indices: negative indices count from the end.
std::vector<Array> dynamic_slice_indices(std::string_view prim, const Array& x,
                                         std::span<const Array> start_indices, SourceInfo src) {
  if (static_cast<int64_t>(start_indices.size()) != x.ndim())
    throw_type_error(src, fmt::format("{}: length of slice indices must match number "
                                      "of operand dimensions ({} vs {})",
                                      prim, start_indices.size(), shape_str(x.shape())));
  std::vector<Array> starts;
  for (size_t k = 0; k < start_indices.size(); ++k) {
    const Array& i = start_indices[k];
    int64_t d = x.shape()[k];
    if (is_unsigned_integer(i.dtype())) {
      starts.push_back(i);
    } else if (i.is_python_scalar() && i.weak_type()) {
      // A C++ integer (JAX: a Python int) is normalised on the host.
      int64_t v = static_cast<int64_t>(i.item());
      starts.push_back(convert_element_type(Array(v < 0 ? v + d : v), i.dtype(), false, src));
    } else {
      Array d_arr = convert_element_type(Array(d), i.dtype(), false, src);
      Array pred = numpy::less(i, 0, src);
      starts.push_back(select(pred, numpy::add(i, d_arr, src), i, src));
    }
  }
  return starts;
}

}  // namespace

Array dynamic_slice(const Array& x, std::span<const Array> start_indices,
                    const std::vector<int64_t>& slice_sizes, SourceInfo src) {
  std::vector<Array> starts = dynamic_slice_indices("dynamic_slice", x, start_indices, src);
  TraceEmitter e(src);
  return lax_ops::dynamic_slice(e, x, starts, slice_sizes);
}

Array dynamic_update_slice(const Array& x, const Array& update,
                           std::span<const Array> start_indices, SourceInfo src) {
  std::vector<Array> starts = dynamic_slice_indices("dynamic_update_slice", x, start_indices, src);
  TraceEmitter e(src);
  return lax_ops::dynamic_update_slice(e, x, update, starts);
}

std::pair<Array, Array> top_k(const Array& x, int64_t k, int64_t axis, SourceInfo src) {
  if (x.ndim() < 1) throw_type_error(src, "top_k: the operand must have at least one dimension");
  const int64_t ax = canonicalize_axis(axis, x.ndim(), "top_k", src);
  TraceEmitter e(src);
  std::vector<Array> outs =
      lax_ops::emit(e, "top_k", {x}, {{"axis", ax}, {"is_stable", true}, {"k", k}});
  return {outs[0], outs[1]};
}

Array gather(const Array& operand, const Array& indices, const GatherDimensionNumbers& dn,
             const std::vector<int64_t>& slice_sizes, const GatherOptions& options,
             SourceInfo src) {
  TraceEmitter e(src);
  const std::optional<ParamValue> fill =
      options.fill_value ? std::optional<ParamValue>(*options.fill_value) : std::nullopt;
  return lax_ops::gather(e, operand, indices, dn, slice_sizes,
                         options.mode.value_or(GatherScatterMode::promise_in_bounds), fill,
                         options.unique_indices, options.indices_are_sorted);
}

namespace {

Array scatter_with(std::string_view prim, const Array& operand, const Array& indices,
                   const Array& updates, const ScatterDimensionNumbers& dn,
                   const ScatterOptions& options, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::scatter_op(e, prim, operand, indices, updates, dn,
                             options.mode.value_or(GatherScatterMode::fill_or_drop),
                             options.indices_are_sorted, options.unique_indices);
}

}  // namespace

Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterDimensionNumbers& dn, const ScatterOptions& options, SourceInfo src) {
  return scatter_with("scatter", operand, indices, updates, dn, options, src);
}
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options,
                  SourceInfo src) {
  return scatter_with("scatter-add", operand, indices, updates, dn, options, src);
}
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options,
                  SourceInfo src) {
  return scatter_with("scatter-mul", operand, indices, updates, dn, options, src);
}
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options,
                  SourceInfo src) {
  return scatter_with("scatter-min", operand, indices, updates, dn, options, src);
}
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options,
                  SourceInfo src) {
  return scatter_with("scatter-max", operand, indices, updates, dn, options, src);
}

Array reduce_sum(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reduce_sum(e, x, axes);
}
Array reduce_max(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reduce_max(e, x, axes);
}
Array reduce_min(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reduce_min(e, x, axes);
}
Array reduce_prod(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reduce_prod(e, x, axes);
}
Array reduce_or(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reduce_or(e, x, axes);
}
Array reduce_and(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::reduce_and(e, x, axes);
}
Array argmax(const Array& x, int64_t axis, DType index_dtype, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::argmax(e, x, axis, index_dtype);
}
Array argmin(const Array& x, int64_t axis, DType index_dtype, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::argmin(e, x, axis, index_dtype);
}

Array cumsum(const Array& x, int64_t axis, bool reverse, SourceInfo src) {
  axis = canonicalize_axis(axis, x.ndim(), "cumsum", src);
  TraceEmitter e(src);
  return lax_ops::cumsum(e, x, axis, reverse);
}

Array cumprod(const Array& x, int64_t axis, bool reverse, SourceInfo src) {
  axis = canonicalize_axis(axis, x.ndim(), "cumprod", src);
  return bind1("cumprod", {x}, lax_params::cumulative(axis, reverse), src);
}

std::vector<Array> split(const Array& x, const std::vector<int64_t>& sizes, int64_t axis,
                         SourceInfo src) {
  axis = canonicalize_axis(axis, x.ndim(), "split", src);
  Params p{{"sizes", ParamValue::np_ints(sizes)}, {"axis", axis}};
  return cjax::bind("split", std::span<const Array>(&x, 1), std::move(p), src);
}

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, bool is_stable,
                        int64_t num_keys, SourceInfo src) {
  if (operands.empty()) throw_type_error(src, "sort: no operands to sort");
  dimension = canonicalize_axis(dimension, operands[0].ndim(), "sort", src);
  TraceEmitter e(src);
  return lax_ops::sort(e, operands, dimension, is_stable, num_keys);
}
Array sort(const Array& x, int64_t dimension, bool is_stable, SourceInfo src) {
  return sort(std::vector<Array>{x}, dimension, is_stable, 1, src)[0];
}
Array rev(const Array& x, const std::vector<int64_t>& dimensions, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::rev(e, x, dimensions);
}

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type, SourceInfo src) {
  TraceEmitter e(src);
  return lax_ops::dot_general(
      e, lhs, rhs, dims,
      preferred_element_type ? ParamValue(*preferred_element_type) : ParamValue(NoneParam{}));
}

}  // namespace cjax::lax
