// Elementwise jax.numpy functions (jax/_src/numpy/ufuncs.py).
#include <fmt/format.h>

#include "cjax/array_impl.h"
#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"

namespace cjax::numpy {

using detail::promote_args;
using detail::promote_args_inexact;
using detail::promote_args_numeric;
using detail::promote_dtypes_inexact;
using detail::promote_dtypes_numeric;

namespace {

using LaxUnary = Array (*)(const Array&, SourceInfo);
using LaxBinary = Array (*)(const Array&, const Array&, SourceInfo);

Array inexact_unary(std::string_view name, LaxUnary op, const Array& x, const SourceInfo& src) {
  Array args[] = {x};
  return op(promote_args_inexact(name, args, src)[0], src);
}

Array plain_unary(std::string_view name, LaxUnary op, const Array& x, const SourceInfo& src) {
  Array args[] = {x};
  return op(promote_args(name, args, src)[0], src);
}

Array binary(std::string_view name, LaxBinary op, const Array& x, const Array& y,
             const SourceInfo& src) {
  Array args[] = {x, y};
  std::vector<Array> p = promote_args(name, args, src);
  return op(p[0], p[1], src);
}

Array inexact_binary(std::string_view name, LaxBinary op, const Array& x, const Array& y,
                     const SourceInfo& src) {
  Array args[] = {x, y};
  std::vector<Array> p = promote_args_inexact(name, args, src);
  return op(p[0], p[1], src);
}

// ufuncs._to_bool: x != 0 unless x is already bool.
Array to_bool(const Array& x, const SourceInfo& src) {
  if (x.dtype() == DType::bool_) return x;
  return lax::ne(x, lax::convert_element_type(0, x.dtype(), false, src), src);
}

bool is_int_or_bool(DType t) {
  return t == DType::bool_ || is_integer(t);
}

}  // namespace

Array negative(const Array& x, Loc src) {
  return plain_unary("negative", lax::neg, x, src);
}
Array positive(const Array& x, Loc) {
  return x;
}
Array sign(const Array& x, Loc src) {
  return plain_unary("sign", lax::sign, x, src);
}

Array absolute(const Array& x, Loc src) {
  if (x.dtype() == DType::bool_ || is_unsigned_integer(x.dtype())) return x;
  return lax::abs(x, src);
}
Array abs(const Array& x, Loc src) {
  return absolute(x, src);
}

Array square(const Array& x, Loc src) {
  Array args[] = {x};
  return lax::square(promote_dtypes_numeric(args, src)[0], src);
}

Array reciprocal(const Array& x, Loc src) {
  Array args[] = {x};
  return lax::integer_pow(promote_dtypes_inexact(args, src)[0], -1, src);
}

Array floor(const Array& x, Loc src) {
  if (is_int_or_bool(x.dtype())) return x;
  return inexact_unary("floor", lax::floor, x, src);
}
Array ceil(const Array& x, Loc src) {
  if (is_int_or_bool(x.dtype())) return x;
  return inexact_unary("ceil", lax::ceil, x, src);
}

Array sqrt(const Array& x, Loc src) {
  return inexact_unary("sqrt", lax::sqrt, x, src);
}
Array rsqrt(const Array& x, Loc src) {
  return inexact_unary("rsqrt", lax::rsqrt, x, src);
}
Array cbrt(const Array& x, Loc src) {
  return inexact_unary("cbrt", lax::cbrt, x, src);
}
Array exp(const Array& x, Loc src) {
  return inexact_unary("exp", lax::exp, x, src);
}
Array exp2(const Array& x, Loc src) {
  return inexact_unary("exp2", lax::exp2, x, src);
}
Array expm1(const Array& x, Loc src) {
  return inexact_unary("expm1", lax::expm1, x, src);
}
Array log(const Array& x, Loc src) {
  return inexact_unary("log", lax::log, x, src);
}
Array log1p(const Array& x, Loc src) {
  return inexact_unary("log1p", lax::log1p, x, src);
}
Array sin(const Array& x, Loc src) {
  return inexact_unary("sin", lax::sin, x, src);
}
Array cos(const Array& x, Loc src) {
  return inexact_unary("cos", lax::cos, x, src);
}
Array tan(const Array& x, Loc src) {
  return inexact_unary("tan", lax::tan, x, src);
}
Array tanh(const Array& x, Loc src) {
  return inexact_unary("tanh", lax::tanh, x, src);
}
Array arcsin(const Array& x, Loc src) {
  return inexact_unary("arcsin", lax::asin, x, src);
}
Array arccos(const Array& x, Loc src) {
  return inexact_unary("arccos", lax::acos, x, src);
}
Array arctan(const Array& x, Loc src) {
  return inexact_unary("arctan", lax::atan, x, src);
}
Array sinh(const Array& x, Loc src) {
  return inexact_unary("sinh", lax::sinh, x, src);
}
Array cosh(const Array& x, Loc src) {
  return inexact_unary("cosh", lax::cosh, x, src);
}
Array arcsinh(const Array& x, Loc src) {
  return inexact_unary("arcsinh", lax::asinh, x, src);
}
Array arctanh(const Array& x, Loc src) {
  return inexact_unary("arctanh", lax::atanh, x, src);
}
Array erf(const Array& x, Loc src) {
  return inexact_unary("erf", lax::erf, x, src);
}

Array logical_not(const Array& x, Loc src) {
  Array args[] = {x};
  return lax::bitwise_not(to_bool(promote_args("logical_not", args, src)[0], src), src);
}

Array add(const Array& x, const Array& y, Loc src) {
  Array args[] = {x, y};
  std::vector<Array> p = promote_args("add", args, src);
  if (p[0].dtype() == DType::bool_) return lax::bitwise_or(p[0], p[1], src);
  return lax::add(p[0], p[1], src);
}

Array multiply(const Array& x, const Array& y, Loc src) {
  Array args[] = {x, y};
  std::vector<Array> p = promote_args("multiply", args, src);
  if (p[0].dtype() == DType::bool_) return lax::bitwise_and(p[0], p[1], src);
  return lax::mul(p[0], p[1], src);
}

Array subtract(const Array& x, const Array& y, Loc src) {
  return binary("subtract", lax::sub, x, y, src);
}
Array true_divide(const Array& x, const Array& y, Loc src) {
  return inexact_binary("true_divide", lax::div, x, y, src);
}
Array divide(const Array& x, const Array& y, Loc src) {
  return true_divide(x, y, src);
}
Array maximum(const Array& x, const Array& y, Loc src) {
  return binary("maximum", lax::max, x, y, src);
}
Array minimum(const Array& x, const Array& y, Loc src) {
  return binary("minimum", lax::min, x, y, src);
}
Array arctan2(const Array& x, const Array& y, Loc src) {
  return inexact_binary("arctan2", lax::atan2, x, y, src);
}
Array equal(const Array& x, const Array& y, Loc src) {
  return binary("equal", lax::eq, x, y, src);
}
Array not_equal(const Array& x, const Array& y, Loc src) {
  return binary("not_equal", lax::ne, x, y, src);
}
Array less(const Array& x, const Array& y, Loc src) {
  return binary("less", lax::lt, x, y, src);
}
Array less_equal(const Array& x, const Array& y, Loc src) {
  return binary("less_equal", lax::le, x, y, src);
}
Array greater(const Array& x, const Array& y, Loc src) {
  return binary("greater", lax::gt, x, y, src);
}
Array greater_equal(const Array& x, const Array& y, Loc src) {
  return binary("greater_equal", lax::ge, x, y, src);
}

Array logical_and(const Array& x, const Array& y, Loc src) {
  Array args[] = {x, y};
  std::vector<Array> p = promote_args("logical_and", args, src);
  return lax::bitwise_and(to_bool(p[0], src), to_bool(p[1], src), src);
}
Array logical_or(const Array& x, const Array& y, Loc src) {
  Array args[] = {x, y};
  std::vector<Array> p = promote_args("logical_or", args, src);
  return lax::bitwise_or(to_bool(p[0], src), to_bool(p[1], src), src);
}

Array power(const Array& x, const Array& y, Loc src) {
  // Case 1 of jnp.power: a concrete integer scalar exponent gives integer_pow.
  if (y.is_concrete() && y.ndim() == 0 && is_integer(y.dtype())) {
    Array args[] = {x};
    return lax::integer_pow(promote_dtypes_numeric(args, src)[0], static_cast<int64_t>(y.item()),
                            src);
  }
  Array xy[] = {x, y};
  std::vector<Array> shaped = detail::promote_shapes("power", xy, src);
  std::vector<Array> p = promote_args_numeric("power", shaped, src);
  if (is_int_or_bool(p[0].dtype()))
    throw UnsupportedError(location_prefix(src) +
                           "power: an integer base with a non-constant exponent is not supported");
  // A floating base with an integer-dtype exponent keeps the exponent's dtype (lax.pow accepts it).
  if (is_floating(shaped[0].dtype()) && is_integer(shaped[1].dtype()))
    return lax::pow(shaped[0], shaped[1], src);
  return lax::pow(p[0], p[1], src);
}

Array where(const Array& condition, const Array& x, const Array& y, Loc src) {
  auto impl = [src](std::span<const Array> a) -> std::vector<Array> {
    Array c = a[0];
    if (c.dtype() != DType::bool_)
      c = lax::ne(c, lax::full_like(c, 0, std::nullopt, Shape{}, src), src);
    Array xy[] = {a[1], a[2]};
    std::vector<Array> p = detail::promote_dtypes(xy, src);
    std::vector<Shape> shapes;
    if (c.ndim() != 0) shapes.push_back(c.shape());
    shapes.push_back(p[0].shape());
    shapes.push_back(p[1].shape());
    Shape out = detail::broadcast_shapes("where", shapes, src);
    bool all_same = true;
    for (const Shape& s : shapes) all_same = all_same && s == shapes[0];
    if (!all_same) {
      if (c.ndim() != 0) c = lax::broadcast_to(c, out, src);
      p[0] = lax::broadcast_to(p[0], out, src);
      p[1] = lax::broadcast_to(p[1], out, src);
    }
    return {lax::select(c, p[0], p[1], src)};
  };
  Array args[] = {condition, x, y};
  return detail::call_jitted("_where", impl, args, src)[0];
}

Array clip(const Array& x, std::optional<Array> min, std::optional<Array> max, Loc src) {
  // jnp.clip is jitted (not inline): `jit[name=clip]` over the given operands.
  std::vector<Array> args{x};
  if (min) args.push_back(*min);
  if (max) args.push_back(*max);
  bool has_min = min.has_value(), has_max = max.has_value();
  auto impl = [=](std::span<const Array> a) -> std::vector<Array> {
    Array out = a[0];
    size_t k = 1;
    if (has_min) out = maximum(a[k++], out, src);
    if (has_max) out = minimum(a[k++], out, src);
    return {out};
  };
  return detail::call_jitted("clip", impl, args, src)[0];
}

}  // namespace cjax::numpy
