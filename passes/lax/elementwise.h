// The lax library's elementwise ops (jax/_src/lax/lax.py): one function per primitive, binding
// the params JAX binds, and the scalar constants JAX's rules build (_const, _one, _zero).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/lax_params.h"
#include "passes/lax/emitter.h"

namespace cjax::lax_ops {

template <class E>
using value_t = typename E::Value;

// --- scalar constants ---------------------------------------------------------------------------

// JAX's `_const(x, v)`: a non-weak scalar of x's dtype.
template <Emitter E>
value_t<E> const_like(E& e, const value_t<E>& x, double v) {
  return e.literal(v, x.aval().dtype, false);
}
// JAX's `_one(x)` / `_zero(x)`: a scalar of x's dtype, weak when x is.
template <Emitter E>
value_t<E> one_like(E& e, const value_t<E>& x) {
  return e.literal(1.0, x.aval().dtype, x.aval().weak_type);
}
template <Emitter E>
value_t<E> zero_like(E& e, const value_t<E>& x) {
  return e.literal(0.0, x.aval().dtype, x.aval().weak_type);
}

// --- generic ------------------------------------------------------------------------------------

template <Emitter E>
value_t<E> unary(E& e, std::string_view prim, const value_t<E>& x) {
  return emit1(e, prim, {x});
}
// The unary ops that bind `accuracy` (exp, log, sin, tanh, ...): None unless a rule passes on its
// eqn's.
template <Emitter E>
value_t<E> unary_acc(E& e, std::string_view prim, const value_t<E>& x,
                     ParamValue accuracy = NoneParam{}) {
  return emit1(e, prim, {x}, {{"accuracy", std::move(accuracy)}});
}
template <Emitter E>
value_t<E> binary(E& e, std::string_view prim, const value_t<E>& x, const value_t<E>& y) {
  return emit1(e, prim, {x, y});
}

// --- unary --------------------------------------------------------------------------------------

#define CJAX_LAX_UNARY(fn, prim)             \
  template <Emitter E>                       \
  value_t<E> fn(E& e, const value_t<E>& x) { \
    return unary(e, prim, x);                \
  }
#define CJAX_LAX_UNARY_ACC(fn, prim)                                            \
  template <Emitter E>                                                          \
  value_t<E> fn(E& e, const value_t<E>& x, ParamValue accuracy = NoneParam{}) { \
    return unary_acc(e, prim, x, std::move(accuracy));                          \
  }

CJAX_LAX_UNARY(neg, "neg")
CJAX_LAX_UNARY(sign, "sign")
CJAX_LAX_UNARY(abs, "abs")
CJAX_LAX_UNARY(floor, "floor")
CJAX_LAX_UNARY(ceil, "ceil")
CJAX_LAX_UNARY(square, "square")
CJAX_LAX_UNARY(asin, "asin")
CJAX_LAX_UNARY(acos, "acos")
CJAX_LAX_UNARY(atan, "atan")
CJAX_LAX_UNARY(sinh, "sinh")
CJAX_LAX_UNARY(cosh, "cosh")
CJAX_LAX_UNARY(asinh, "asinh")
CJAX_LAX_UNARY(acosh, "acosh")
CJAX_LAX_UNARY(atanh, "atanh")
CJAX_LAX_UNARY(erf, "erf")
CJAX_LAX_UNARY(erfc, "erfc")
CJAX_LAX_UNARY(erf_inv, "erf_inv")
CJAX_LAX_UNARY(bitwise_not, "not")
CJAX_LAX_UNARY(is_finite, "is_finite")
CJAX_LAX_UNARY(population_count, "population_count")
CJAX_LAX_UNARY_ACC(exp, "exp")
CJAX_LAX_UNARY_ACC(exp2, "exp2")
CJAX_LAX_UNARY_ACC(expm1, "expm1")
CJAX_LAX_UNARY_ACC(log, "log")
CJAX_LAX_UNARY_ACC(log1p, "log1p")
CJAX_LAX_UNARY_ACC(sin, "sin")
CJAX_LAX_UNARY_ACC(cos, "cos")
CJAX_LAX_UNARY_ACC(tan, "tan")
CJAX_LAX_UNARY_ACC(tanh, "tanh")
CJAX_LAX_UNARY_ACC(logistic, "logistic")
CJAX_LAX_UNARY_ACC(sqrt, "sqrt")
CJAX_LAX_UNARY_ACC(rsqrt, "rsqrt")
CJAX_LAX_UNARY_ACC(cbrt, "cbrt")

#undef CJAX_LAX_UNARY
#undef CJAX_LAX_UNARY_ACC

template <Emitter E>
value_t<E> integer_pow(E& e, const value_t<E>& x, int64_t y) {
  return emit1(e, "integer_pow", {x}, lax_params::integer_pow(y));
}
// lax.reciprocal: integer_pow(x, -1).
template <Emitter E>
value_t<E> reciprocal(E& e, const value_t<E>& x) {
  return integer_pow(e, x, -1);
}

// lax.stop_gradient: an integer or bool value, which has no tangent anyway, is returned as it is.
template <Emitter E>
value_t<E> stop_gradient(E& e, const value_t<E>& x) {
  if (!is_floating(x.aval().dtype)) return x;
  return unary(e, "stop_gradient", x);
}

template <Emitter E>
value_t<E> bitcast_convert_type(E& e, const value_t<E>& x, DType new_dtype) {
  return emit1(e, "bitcast_convert_type", {x}, {{"new_dtype", new_dtype}});
}

// lax._convert_element_type: an Array already of this dtype and weak type is returned as it is;
// a host constant is folded by the emitter.
template <Emitter E>
value_t<E> convert_element_type(E& e, const value_t<E>& x, DType dtype, bool weak_type = false) {
  const ShapedArray& a = x.aval();
  if (a.dtype == dtype && a.weak_type == weak_type && e.is_array(x)) return x;
  return emit1(e, "convert_element_type", {x}, lax_params::convert_element_type(dtype, weak_type));
}

// --- binary -------------------------------------------------------------------------------------

#define CJAX_LAX_BINARY(fn, prim)                                 \
  template <Emitter E>                                            \
  value_t<E> fn(E& e, const value_t<E>& x, const value_t<E>& y) { \
    return binary(e, prim, x, y);                                 \
  }

CJAX_LAX_BINARY(add, "add")
CJAX_LAX_BINARY(sub, "sub")
CJAX_LAX_BINARY(div, "div")
CJAX_LAX_BINARY(rem, "rem")
CJAX_LAX_BINARY(pow, "pow")
CJAX_LAX_BINARY(max, "max")
CJAX_LAX_BINARY(min, "min")
CJAX_LAX_BINARY(atan2, "atan2")
CJAX_LAX_BINARY(nextafter, "nextafter")
CJAX_LAX_BINARY(bitwise_and, "and")
CJAX_LAX_BINARY(bitwise_or, "or")
CJAX_LAX_BINARY(bitwise_xor, "xor")
CJAX_LAX_BINARY(shift_left, "shift_left")
CJAX_LAX_BINARY(shift_right_logical, "shift_right_logical")
CJAX_LAX_BINARY(shift_right_arithmetic, "shift_right_arithmetic")
CJAX_LAX_BINARY(eq, "eq")
CJAX_LAX_BINARY(ne, "ne")
CJAX_LAX_BINARY(lt, "lt")
CJAX_LAX_BINARY(le, "le")
CJAX_LAX_BINARY(gt, "gt")
CJAX_LAX_BINARY(ge, "ge")
// ad_util.add_jaxvals: the sum of two tangents or cotangents.
CJAX_LAX_BINARY(add_any, "add_any")

#undef CJAX_LAX_BINARY

// lax.mul binds `out_dtype` (None unless given).
template <Emitter E>
value_t<E> mul(E& e, const value_t<E>& x, const value_t<E>& y, ParamValue out_dtype = NoneParam{}) {
  return emit1(e, "mul", {x, y}, {{"out_dtype", std::move(out_dtype)}});
}

// lax.clamp(min, x, max): min and max scalars or of x's shape.
template <Emitter E>
value_t<E> clamp(E& e, const value_t<E>& lo, const value_t<E>& x, const value_t<E>& hi) {
  return emit1(e, "clamp", {lo, x, hi});
}

// select_n(which, *cases), and lax.select(pred, on_true, on_false) = select_n(pred, on_false,
// on_true).
template <Emitter E>
value_t<E> select_n(E& e, const value_t<E>& which, const std::vector<value_t<E>>& cases) {
  std::vector<value_t<E>> in{which};
  in.insert(in.end(), cases.begin(), cases.end());
  return emit1(e, "select_n", std::move(in));
}
template <Emitter E>
value_t<E> select(E& e, const value_t<E>& pred, const value_t<E>& on_true,
                  const value_t<E>& on_false) {
  return select_n(e, pred, {on_false, on_true});
}

}  // namespace cjax::lax_ops
