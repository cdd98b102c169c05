#include "cjax/lax.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "cjax/bind.h"
#include "cjax/numpy.h"
#include "ir/errors.h"

namespace cjax::lax {
namespace {

Array unary(std::string_view name, const Array& x, const SourceInfo& src) {
  return bind1(name, {x}, {}, src);
}
Array unary_acc(std::string_view name, const Array& x, const SourceInfo& src) {
  return bind1(name, {x}, {{"accuracy", NoneParam{}}}, src);
}
Array binary(std::string_view name, const Array& x, const Array& y, const SourceInfo& src) {
  return bind1(name, {x, y}, {}, src);
}

std::string ints_text(const std::vector<int64_t>& xs) {
  return shape_str(xs);
}

}  // namespace

int64_t canonicalize_axis(int64_t axis, int64_t rank, std::string_view op, const SourceInfo& src) {
  if (axis < -rank || axis >= rank)
    throw_type_error(
        src, fmt::format("{}: axis {} is out of bounds for an array of rank {}", op, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

Array convert_element_type(const Array& x, DType new_dtype, bool weak_type, SourceInfo src) {
  if (x.dtype() == new_dtype && x.weak_type() == weak_type) return x;
  return bind1("convert_element_type", {x},
               {{"new_dtype", new_dtype}, {"weak_type", weak_type}, {"sharding", NoneParam{}}},
               src);
}

Array neg(const Array& x, SourceInfo src) {
  return unary("neg", x, src);
}
Array sign(const Array& x, SourceInfo src) {
  return unary("sign", x, src);
}
Array abs(const Array& x, SourceInfo src) {
  return unary("abs", x, src);
}
Array floor(const Array& x, SourceInfo src) {
  return unary("floor", x, src);
}
Array ceil(const Array& x, SourceInfo src) {
  return unary("ceil", x, src);
}
Array exp(const Array& x, SourceInfo src) {
  return unary_acc("exp", x, src);
}
Array exp2(const Array& x, SourceInfo src) {
  return unary_acc("exp2", x, src);
}
Array expm1(const Array& x, SourceInfo src) {
  return unary_acc("expm1", x, src);
}
Array log(const Array& x, SourceInfo src) {
  return unary_acc("log", x, src);
}
Array log1p(const Array& x, SourceInfo src) {
  return unary_acc("log1p", x, src);
}
Array sin(const Array& x, SourceInfo src) {
  return unary_acc("sin", x, src);
}
Array cos(const Array& x, SourceInfo src) {
  return unary_acc("cos", x, src);
}
Array tan(const Array& x, SourceInfo src) {
  return unary_acc("tan", x, src);
}
Array tanh(const Array& x, SourceInfo src) {
  return unary_acc("tanh", x, src);
}
Array logistic(const Array& x, SourceInfo src) {
  return unary_acc("logistic", x, src);
}
Array sqrt(const Array& x, SourceInfo src) {
  return unary_acc("sqrt", x, src);
}
Array rsqrt(const Array& x, SourceInfo src) {
  return unary_acc("rsqrt", x, src);
}
Array cbrt(const Array& x, SourceInfo src) {
  return unary_acc("cbrt", x, src);
}
Array asin(const Array& x, SourceInfo src) {
  return unary("asin", x, src);
}
Array acos(const Array& x, SourceInfo src) {
  return unary("acos", x, src);
}
Array atan(const Array& x, SourceInfo src) {
  return unary("atan", x, src);
}
Array sinh(const Array& x, SourceInfo src) {
  return unary("sinh", x, src);
}
Array cosh(const Array& x, SourceInfo src) {
  return unary("cosh", x, src);
}
Array asinh(const Array& x, SourceInfo src) {
  return unary("asinh", x, src);
}
Array acosh(const Array& x, SourceInfo src) {
  return unary("acosh", x, src);
}
Array atanh(const Array& x, SourceInfo src) {
  return unary("atanh", x, src);
}
Array erf(const Array& x, SourceInfo src) {
  return unary("erf", x, src);
}
Array erfc(const Array& x, SourceInfo src) {
  return unary("erfc", x, src);
}
Array erf_inv(const Array& x, SourceInfo src) {
  return unary("erf_inv", x, src);
}
Array stop_gradient(const Array& x, SourceInfo src) {
  if (!is_floating(x.dtype())) return x;
  return unary("stop_gradient", x, src);
}
Array square(const Array& x, SourceInfo src) {
  return unary("square", x, src);
}
Array bitwise_not(const Array& x, SourceInfo src) {
  return unary("not", x, src);
}
Array is_finite(const Array& x, SourceInfo src) {
  return unary("is_finite", x, src);
}
Array integer_pow(const Array& x, int64_t y, SourceInfo src) {
  return bind1("integer_pow", {x}, {{"y", y}}, src);
}

Array add(const Array& x, const Array& y, SourceInfo src) {
  return binary("add", x, y, src);
}
Array sub(const Array& x, const Array& y, SourceInfo src) {
  return binary("sub", x, y, src);
}
Array mul(const Array& x, const Array& y, SourceInfo src) {
  return bind1("mul", {x, y}, {{"out_dtype", NoneParam{}}}, src);
}
Array div(const Array& x, const Array& y, SourceInfo src) {
  return binary("div", x, y, src);
}
Array rem(const Array& x, const Array& y, SourceInfo src) {
  return binary("rem", x, y, src);
}
Array pow(const Array& x, const Array& y, SourceInfo src) {
  return binary("pow", x, y, src);
}
Array max(const Array& x, const Array& y, SourceInfo src) {
  return binary("max", x, y, src);
}
Array min(const Array& x, const Array& y, SourceInfo src) {
  return binary("min", x, y, src);
}
Array atan2(const Array& x, const Array& y, SourceInfo src) {
  return binary("atan2", x, y, src);
}
Array bitwise_and(const Array& x, const Array& y, SourceInfo src) {
  return binary("and", x, y, src);
}
Array bitwise_or(const Array& x, const Array& y, SourceInfo src) {
  return binary("or", x, y, src);
}
Array bitwise_xor(const Array& x, const Array& y, SourceInfo src) {
  return binary("xor", x, y, src);
}
Array shift_left(const Array& x, const Array& y, SourceInfo src) {
  return binary("shift_left", x, y, src);
}
Array shift_right_logical(const Array& x, const Array& y, SourceInfo src) {
  return binary("shift_right_logical", x, y, src);
}
Array shift_right_arithmetic(const Array& x, const Array& y, SourceInfo src) {
  return binary("shift_right_arithmetic", x, y, src);
}
Array population_count(const Array& x, SourceInfo src) {
  return unary("population_count", x, src);
}
Array bitcast_convert_type(const Array& x, DType new_dtype, SourceInfo src) {
  return bind1("bitcast_convert_type", {x}, {{"new_dtype", new_dtype}}, src);
}
Array eq(const Array& x, const Array& y, SourceInfo src) {
  return binary("eq", x, y, src);
}
Array ne(const Array& x, const Array& y, SourceInfo src) {
  return binary("ne", x, y, src);
}
Array lt(const Array& x, const Array& y, SourceInfo src) {
  return binary("lt", x, y, src);
}
Array le(const Array& x, const Array& y, SourceInfo src) {
  return binary("le", x, y, src);
}
Array gt(const Array& x, const Array& y, SourceInfo src) {
  return binary("gt", x, y, src);
}
Array ge(const Array& x, const Array& y, SourceInfo src) {
  return binary("ge", x, y, src);
}

Array select_n(const Array& which, std::span<const Array> cases, SourceInfo src) {
  if (cases.empty()) throw_type_error(src, "select_n: at least one case is required");
  std::vector<Array> ins{which};
  ins.insert(ins.end(), cases.begin(), cases.end());
  return bind1("select_n", ins, {}, src);
}

Array select(const Array& pred, const Array& on_true, const Array& on_false, SourceInfo src) {
  Array cases[] = {on_false, on_true};
  return select_n(pred, cases, src);
}

Array broadcast_in_dim(const Array& x, const Shape& shape, const std::vector<int64_t>& dims,
                       SourceInfo src) {
  // JAX returns an Array operand unchanged when nothing is to be done (not a Python scalar).
  if (x.ndim() == static_cast<int64_t>(shape.size()) && dims.empty() && !x.is_python_scalar())
    return x;
  return bind1("broadcast_in_dim", {x},
               {{"shape", ParamValue::ints(shape)},
                {"broadcast_dimensions", ParamValue::ints(dims)},
                {"sharding", NoneParam{}}},
               src);
}

Array broadcast(const Array& x, const Shape& sizes, SourceInfo src) {
  if (sizes.empty()) return x;
  std::vector<int64_t> dims(x.ndim());
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(sizes.size()));
  Shape shape = sizes;
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  return broadcast_in_dim(x, shape, dims, src);
}

Array broadcast_to_rank(const Array& x, int64_t rank, SourceInfo src) {
  if (x.ndim() == rank) return x;
  return broadcast(x, Shape(static_cast<size_t>(rank - x.ndim()), 1), src);
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
  bool same_dims = true;
  if (dimensions) {
    for (size_t i = 0; i < dimensions->size(); ++i)
      same_dims = same_dims && (*dimensions)[i] == static_cast<int64_t>(i);
    same_dims = same_dims && static_cast<int64_t>(dimensions->size()) == x.ndim();
  }
  if (x.ndim() > 0 && x.shape() == new_sizes && same_dims && !x.is_python_scalar()) return x;
  ParamValue dims_param =
      !dimensions || same_dims ? ParamValue(NoneParam{}) : ParamValue::ints(*dimensions);
  return bind1("reshape", {x},
               {{"new_sizes", ParamValue::ints(new_sizes)},
                {"dimensions", dims_param},
                {"sharding", NoneParam{}}},
               src);
}

Array transpose(const Array& x, const std::vector<int64_t>& permutation, SourceInfo src) {
  bool identity = static_cast<int64_t>(permutation.size()) == x.ndim();
  for (size_t i = 0; identity && i < permutation.size(); ++i)
    identity = permutation[i] == static_cast<int64_t>(i);
  if (identity && !x.is_python_scalar()) return x;
  return bind1("transpose", {x}, {{"permutation", ParamValue::ints(permutation)}}, src);
}

Array squeeze(const Array& x, const std::vector<int64_t>& dimensions, SourceInfo src) {
  std::vector<int64_t> dims;
  for (int64_t d : dimensions) dims.push_back(canonicalize_axis(d, x.ndim(), "squeeze", src));
  std::sort(dims.begin(), dims.end());
  if (dims.empty() && !x.is_python_scalar()) return x;
  return bind1("squeeze", {x}, {{"dimensions", ParamValue::ints(dims)}}, src);
}

Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions, SourceInfo src) {
  int64_t ndim_out = x.ndim() + static_cast<int64_t>(dimensions.size());
  std::set<int64_t> dims;
  for (int64_t d : dimensions) {
    int64_t c = canonicalize_axis(d, ndim_out, "expand_dims", src);
    if (!dims.insert(c).second)
      throw_type_error(src, fmt::format("expand_dims: repeated axis in {}", ints_text(dimensions)));
  }
  Shape shape = x.shape();
  for (int64_t d : dims) shape.insert(shape.begin() + d, 1);
  std::vector<int64_t> bdims;
  for (int64_t i = 0; i < ndim_out; ++i)
    if (!dims.count(i)) bdims.push_back(i);
  return broadcast_in_dim(x, shape, bdims, src);
}

Array concatenate(std::span<const Array> operands, int64_t dimension, SourceInfo src) {
  if (operands.empty())
    throw_type_error(src, "concatenate: requires a non-empty sequence of arrays");
  if (operands.size() == 1 && !operands[0].is_python_scalar()) return operands[0];
  return bind1("concatenate", operands, {{"dimension", dimension}}, src);
}

Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension, SourceInfo src) {
  return bind1("iota", std::span<const Array>(),
               {{"dtype", dtype},
                {"shape", ParamValue::ints(shape)},
                {"dimension", dimension},
                {"sharding", NoneParam{}}},
               src);
}

Array iota(DType dtype, int64_t size, SourceInfo src) {
  return broadcasted_iota(dtype, Shape{size}, 0, src);
}

Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype,
           SourceInfo src) {
  if (fill_value.ndim() != 0)
    throw_type_error(src, fmt::format("full must be called with scalar fill_value, got "
                                      "fill_value.shape {}",
                                      shape_str(fill_value.shape())));
  bool weak = dtype ? false : fill_value.weak_type();
  Array fill = convert_element_type(fill_value, dtype.value_or(fill_value.dtype()), weak, src);
  return broadcast(fill, shape, src);
}

Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype,
                std::optional<Shape> shape, SourceInfo src) {
  bool weak = !dtype && x.weak_type();
  DType t = dtype.value_or(x.dtype());
  return full(shape.value_or(x.shape()), convert_element_type(fill_value, t, weak, src),
              std::nullopt, src);
}

Array slice(const Array& x, const std::vector<int64_t>& start_indices,
            const std::vector<int64_t>& limit_indices, std::optional<std::vector<int64_t>> strides,
            SourceInfo src) {
  return bind1("slice", {x},
               {{"start_indices", ParamValue::ints(start_indices)},
                {"limit_indices", ParamValue::ints(limit_indices)},
                {"strides", strides ? ParamValue::ints(*strides) : ParamValue(NoneParam{})}},
               src);
}

Array dynamic_slice(const Array& x, std::span<const Array> start_indices,
                    const std::vector<int64_t>& slice_sizes, SourceInfo src) {
  if (static_cast<int64_t>(start_indices.size()) != x.ndim())
    throw_type_error(src, fmt::format("dynamic_slice: length of slice indices must match number "
                                      "of operand dimensions ({} vs {})",
                                      start_indices.size(), shape_str(x.shape())));
  // jax.lax.slicing._dynamic_slice_indices: negative indices count from the end.
  std::vector<Array> ins{x};
  for (size_t k = 0; k < start_indices.size(); ++k) {
    const Array& i = start_indices[k];
    int64_t d = x.shape()[k];
    if (is_unsigned_integer(i.dtype())) {
      ins.push_back(i);
    } else if (i.is_python_scalar() && i.weak_type()) {
      // A C++ integer (JAX: a Python int) is normalised on the host.
      int64_t v = static_cast<int64_t>(i.item());
      ins.push_back(convert_element_type(Array(v < 0 ? v + d : v), i.dtype(), false, src));
    } else {
      Array d_arr = convert_element_type(Array(d), i.dtype(), false, src);
      Array pred = numpy::less(i, 0, src);
      ins.push_back(select(pred, numpy::add(i, d_arr, src), i, src));
    }
  }
  return bind1("dynamic_slice", ins, {{"slice_sizes", ParamValue::ints(slice_sizes)}}, src);
}

Array reduce_sum(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  return bind1("reduce_sum", {x}, {{"axes", ParamValue::ints(axes)}, {"out_sharding", NoneParam{}}},
               src);
}
Array reduce_max(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  return bind1("reduce_max", {x}, {{"axes", ParamValue::ints(axes)}, {"out_sharding", NoneParam{}}},
               src);
}
Array reduce_min(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  return bind1("reduce_min", {x}, {{"axes", ParamValue::ints(axes)}, {"out_sharding", NoneParam{}}},
               src);
}
Array reduce_prod(const Array& x, const std::vector<int64_t>& axes, SourceInfo src) {
  return bind1("reduce_prod", {x}, {{"axes", ParamValue::ints(axes)}}, src);
}
Array argmax(const Array& x, int64_t axis, DType index_dtype, SourceInfo src) {
  return bind1("argmax", {x}, {{"axes", ParamValue::ints({axis})}, {"index_dtype", index_dtype}},
               src);
}
Array argmin(const Array& x, int64_t axis, DType index_dtype, SourceInfo src) {
  return bind1("argmin", {x}, {{"axes", ParamValue::ints({axis})}, {"index_dtype", index_dtype}},
               src);
}

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, bool is_stable,
                        int64_t num_keys, SourceInfo src) {
  if (operands.empty()) throw_type_error(src, "sort: no operands to sort");
  dimension = canonicalize_axis(dimension, operands[0].ndim(), "sort", src);
  return bind("sort", operands,
              {{"dimension", dimension}, {"is_stable", is_stable}, {"num_keys", num_keys}}, src);
}
Array sort(const Array& x, int64_t dimension, bool is_stable, SourceInfo src) {
  return sort(std::vector<Array>{x}, dimension, is_stable, 1, src)[0];
}
Array rev(const Array& x, const std::vector<int64_t>& dimensions, SourceInfo src) {
  return bind1("rev", {x}, {{"dimensions", ParamValue::ints(dimensions)}}, src);
}

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type, SourceInfo src) {
  return bind1(
      "dot_general", {lhs, rhs},
      {{"dimension_numbers", dims.to_param()},
       {"precision", NoneParam{}},
       {"preferred_element_type",
        preferred_element_type ? ParamValue(*preferred_element_type) : ParamValue(NoneParam{})},
       {"out_sharding", NoneParam{}}},
      src);
}

}  // namespace cjax::lax
