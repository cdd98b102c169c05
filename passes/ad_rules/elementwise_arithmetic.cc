// Autodiff rules of the arithmetic primitives (jax/_src/lax/lax.py): neg, add, sub, mul, div,
// add_any, max, min, pow, integer_pow, rem, sign, abs, square, sqrt, rsqrt, cbrt, clamp.
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;
using Primals = std::span<const Atom>;

// add / sub jvp: a single nonzero tangent passes through, broadcast to the output shape.
JvpRule additive_jvp(bool is_sub) {
  return [is_sub](const JvpRuleArgs& a) -> std::vector<Tangent> {
    const Shape& shape = a.primal_outs[0].aval().shape;
    const Tangent& x = a.tangents[0];
    const Tangent& y = a.tangents[1];
    if (x && y) return {is_sub ? sub(a.b, *x, *y) : add(a.b, *x, *y)};
    if (x) return {maybe_broadcast(a.b, shape, *x)};
    Atom t = is_sub ? neg(a.b, *y) : *y;
    return {maybe_broadcast(a.b, shape, t)};
  };
}

// add / sub / add_any transpose: the cotangent (negated for sub's rhs), summed down to each
// linear operand's shape.
std::vector<Cotangent> additive_transpose(const TransposeRuleArgs& a, bool negate_rhs) {
  std::vector<Cotangent> cts(2);
  const Atom& ct = *a.cts[0];
  if (a.args[0].linear) cts[0] = unbroadcast(a.b, a.args[0].aval(), ct);
  if (a.args[1].linear) {
    Atom t = negate_rhs ? neg(a.b, ct) : ct;
    cts[1] = unbroadcast(a.b, a.args[1].aval(), t);
  }
  return cts;
}

const ParamValue& out_dtype_of(const Eqn& e) {
  static const ParamValue none = NoneParam{};
  const ParamValue* v = e.params.find("out_dtype");
  return v ? *v : none;
}

// JAX's _balanced_eq(x, z, y): 1 where x == z, halved where y == z too (ties split the
// gradient), 0 elsewhere.
Atom balanced_eq(JaxprBuilder& b, const Atom& x, const Atom& z, const Atom& y) {
  Atom x_eq = eq(b, x, z);
  Atom ones = full_like(b, z, 1.0);
  Atom zeros = full_like(b, z, 0.0);
  Atom num = select(b, x_eq, ones, zeros);
  Atom y_eq = eq(b, y, z);
  Atom twos = full_like(b, z, 2.0);
  Atom ones2 = full_like(b, z, 1.0);
  Atom den = select(b, y_eq, twos, ones2);
  return div(b, num, den);
}

// JAX's _replace_zero(x): x with zeros replaced by ones.
Atom replace_zero(JaxprBuilder& b, const Atom& x) {
  Atom is_zero = eq(b, x, const_like(b, x, 0.0));
  Atom ones = full_like(b, x, 1.0);
  return select(b, is_zero, ones, x);
}

// d pow(x, y) / dx for an integer exponent (converted to x's dtype): zero where y == 0, so that
// 0 ** 0 has derivative 0 rather than nan.
Atom pow_int_jac(JaxprBuilder& b, Atom x, Atom y) {
  if (x.aval().shape != y.aval().shape) {
    Shape shape = broadcast_shapes(x.aval().shape, y.aval().shape);
    x = maybe_broadcast(b, shape, x);
    y = maybe_broadcast(b, shape, y);
  }
  Atom y_is_zero = eq(b, y, const_like(b, y, 0.0));
  Atom zeros = full_like(b, y, 0.0);
  Atom safe_y = replace_zero(b, y);
  Atom ones = full_like(b, y, 1.0);
  Atom y_minus_1 = sub(b, y, ones);
  Atom x_pow = pow(b, x, y_minus_1);
  Atom prod = mul(b, safe_y, x_pow);
  return select(b, y_is_zero, zeros, prod);
}

Atom pow_jvp_lhs(JaxprBuilder& b, const Atom& g, const Atom&, Primals p, const Eqn&) {
  DType y_dtype = p[1].aval().dtype;
  DType result_dtype = p[0].aval().dtype;  // the base is floating; the exponent promotes to it
  Atom x = convert_element_type(b, p[0], result_dtype);
  Atom y = convert_element_type(b, p[1], result_dtype);
  if (is_integer(y_dtype)) return mul(b, g, pow_int_jac(b, x, y));
  Atom ones = full_like(b, y, 1.0);
  Atom y_minus_1 = sub(b, y, ones);
  Atom x_pow = pow(b, x, y_minus_1);
  Atom jac = mul(b, y, x_pow);
  return mul(b, g, jac);
}

Atom pow_jvp_rhs(JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn&) {
  DType y_dtype = p[1].aval().dtype;
  Atom safe_x = replace_zero(b, p[0]);
  Atom log_x = log(b, safe_x);
  Atom inner = mul(b, log_x, ans);
  Atom t = mul(b, g, inner);
  return convert_element_type(b, t, y_dtype);
}

Atom integer_pow_jvp(JaxprBuilder& b, const Atom& g, Primals p, const Eqn& e) {
  const Atom& x = p[0];
  int64_t y = e.params.get_int("y");
  if (y == 0) return full_like(b, g, 0.0);
  if (y == 1) return g;
  if (y == 2) {
    Atom two_x = mul(b, const_like(b, x, double(y)), x);
    return mul(b, g, two_x);
  }
  Atom x_pow = integer_pow(b, x, y - 1);
  Atom scaled = mul(b, const_like(b, x, double(y)), x_pow);
  return mul(b, g, scaled);
}

Atom rem_jvp_rhs(JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
  const Atom &x = p[0], &y = p[1];
  Atom neg_g = neg(b, g);
  Atom q1 = div(b, x, y);
  Atom s = sign(b, q1);
  Atom q2 = div(b, x, y);
  Atom a = abs(b, q2);
  Atom f = floor(b, a);
  Atom sf = mul(b, s, f);
  return mul(b, neg_g, sf);
}

// One clamp term: select(pred, g, zeros(operand)), with a scalar min/max tangent broadcast to the
// operand's shape (JAX assumes jnp.clip broadcast the bounds first).
Atom clamp_term(JaxprBuilder& b, const Atom& pred, const Atom& g, const Atom& operand) {
  Atom zeros = full_like(b, operand, 0.0);
  Atom gb = maybe_broadcast(b, operand.aval().shape, g);
  return select(b, pred, gb, zeros);
}

}  // namespace

void register_arithmetic_ad_rules() {
  deflinear("neg",
            [](const TransposeRuleArgs& a) { return std::vector<Cotangent>{neg(a.b, *a.cts[0])}; });

  define_pass_rules("add").jvp = additive_jvp(false);
  define_pass_rules("add").transpose = [](const TransposeRuleArgs& a) {
    return additive_transpose(a, false);
  };
  define_pass_rules("sub").jvp = additive_jvp(true);
  define_pass_rules("sub").transpose = [](const TransposeRuleArgs& a) {
    return additive_transpose(a, true);
  };
  deflinear("add_any", [](const TransposeRuleArgs& a) { return additive_transpose(a, false); });

  defjvp("mul", {[](JaxprBuilder& b, const Atom& g, Primals p, const Eqn& e) {
                   return mul(b, g, p[1], out_dtype_of(e));
                 },
                 [](JaxprBuilder& b, const Atom& g, Primals p, const Eqn& e) {
                   return mul(b, p[0], g, out_dtype_of(e));
                 }});
  define_pass_rules("mul").transpose = [](const TransposeRuleArgs& a) {
    if (a.args[0].linear && a.args[1].linear)
      unsupported("transpose: mul of two linear values is not linear", a.eqn);
    std::vector<Cotangent> cts(2);
    const Atom& ct = *a.cts[0];
    bool typed = !out_dtype_of(a.eqn).is_none();
    if (a.args[0].linear) {
      const ShapedArray& x = a.args[0].aval();
      Atom g = mul(a.b, ct, a.args[1].value, typed ? ParamValue(x.dtype) : NoneParam{});
      cts[0] = unbroadcast(a.b, x, g);
    } else if (a.args[1].linear) {
      const ShapedArray& y = a.args[1].aval();
      Atom g = mul(a.b, a.args[0].value, ct, typed ? ParamValue(y.dtype) : NoneParam{});
      cts[1] = unbroadcast(a.b, y, g);
    }
    return cts;
  };

  defjvp("div",
         {[](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) { return div(b, g, p[1]); },
          [](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
            Atom neg_g = neg(b, g);
            Atom num = mul(b, neg_g, p[0]);
            Atom inv_sq = integer_pow(b, p[1], -2);
            return mul(b, num, inv_sq);
          }});
  define_pass_rules("div").transpose = [](const TransposeRuleArgs& a) {
    if (a.args[1].linear) unsupported("transpose: div is not linear in its divisor", a.eqn);
    Atom q = div(a.b, *a.cts[0], a.args[1].value);
    return std::vector<Cotangent>{unbroadcast(a.b, a.args[0].aval(), q), std::nullopt};
  };

  for (const char* name : {"max", "min"})
    defjvp2(name, {[](JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn&) {
                     Atom w = balanced_eq(b, p[0], ans, p[1]);
                     return mul(b, g, w);
                   },
                   [](JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn&) {
                     Atom w = balanced_eq(b, p[1], ans, p[0]);
                     return mul(b, g, w);
                   }});

  defjvp2("pow", {pow_jvp_lhs, pow_jvp_rhs});
  defjvp("integer_pow", {integer_pow_jvp});

  defjvp("rem", {[](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
                   Shape shape = broadcast_shapes(p[0].aval().shape, p[1].aval().shape);
                   return maybe_broadcast(b, shape, g);
                 },
                 rem_jvp_rhs});

  defjvp_zero("sign");

  defjvp2("abs", {[](JaxprBuilder& b, const Atom& g, const Atom&, Primals p, const Eqn&) {
            Atom nonneg = ge(b, p[0], zero_like(b, p[0]));
            Atom neg_g = neg(b, g);
            return select(b, nonneg, g, neg_g);
          }});

  defjvp2("square", {[](JaxprBuilder& b, const Atom& g, const Atom&, Primals p, const Eqn&) {
            Atom two_x = mul(b, const_like(b, p[0], 2.0), p[0]);
            return mul(b, g, two_x);
          }});
  defjvp2("sqrt", {[](JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn&) {
            Atom q = div(b, const_like(b, p[0], 0.5), ans);
            return mul(b, g, q);
          }});
  defjvp2("rsqrt", {[](JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn&) {
            Atom q = div(b, ans, p[0]);
            Atom s = mul(b, const_like(b, p[0], -0.5), q);
            return mul(b, g, s);
          }});
  defjvp2("cbrt", {[](JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn&) {
            Atom inv_sq = integer_pow(b, ans, -2);
            Atom s = mul(b, const_like(b, p[0], 1.0 / 3.0), inv_sq);
            return mul(b, g, s);
          }});

  // clamp(min, operand, max).
  defjvp("clamp", {[](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
                     Atom above = gt(b, p[0], p[1]);
                     Atom ordered = lt(b, p[0], p[2]);
                     Atom pred = bitwise_and(b, above, ordered);
                     return clamp_term(b, pred, g, p[1]);
                   },
                   [](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
                     Atom above = gt(b, p[1], p[0]);
                     Atom below = lt(b, p[1], p[2]);
                     Atom pred = bitwise_and(b, above, below);
                     return clamp_term(b, pred, g, p[1]);
                   },
                   [](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
                     Atom pred = lt(b, p[2], p[1]);
                     return clamp_term(b, pred, g, p[1]);
                   }});
}

}  // namespace cjax
