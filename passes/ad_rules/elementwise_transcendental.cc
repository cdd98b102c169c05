// Autodiff rules of the transcendental primitives (jax/_src/lax/lax.py, jax/_src/lax/special.py).
// Ops that take an `accuracy` param pass the eqn's on where JAX's rule does.
#include <cmath>
#include <numbers>

#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;
using Primals = std::span<const Atom>;

void def1(std::string_view prim,
          std::function<Atom(JaxprBuilder&, const Atom& g, const Atom& x, const Eqn&)> term) {
  defjvp(prim, {[term](JaxprBuilder& b, const Atom& g, Primals p, const Eqn& e) {
           return term(b, g, p[0], e);
         }});
}

void def1_ans(
    std::string_view prim,
    std::function<Atom(JaxprBuilder&, const Atom& g, const Atom& ans, const Atom& x, const Eqn&)>
        term) {
  defjvp2(prim, {[term](JaxprBuilder& b, const Atom& g, const Atom& ans, Primals p, const Eqn& e) {
            return term(b, g, ans, p[0], e);
          }});
}

// mul(c * g, exp(-x^2)) for erf / erfc.
Atom erf_like(JaxprBuilder& b, const Atom& g, const Atom& x, double c) {
  Atom sq = square(b, x);
  Atom n = neg(b, sq);
  Atom e = exp(b, n);
  Atom ge = mul(b, g, e);
  return mul(b, const_like(b, x, c), ge);
}

}  // namespace

void register_transcendental_ad_rules() {
  def1("sin", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn& e) {
    Atom c = cos(b, x, accuracy_of(e));
    return mul(b, g, c);
  });
  def1("cos", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn& e) {
    Atom s = sin(b, x, accuracy_of(e));
    Atom gs = mul(b, g, s);
    return neg(b, gs);
  });
  def1_ans("tan", [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom& x, const Eqn&) {
    Atom sq = square(b, ans);
    Atom s = add(b, const_like(b, x, 1.0), sq);
    return mul(b, g, s);
  });
  def1("asin", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom sq = square(b, x);
    Atom d = sub(b, const_like(b, x, 1.0), sq);
    Atom r = rsqrt(b, d);
    return mul(b, g, r);
  });
  def1("acos", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom sq = square(b, x);
    Atom d = sub(b, const_like(b, x, 1.0), sq);
    Atom r = rsqrt(b, d);
    Atom n = neg(b, r);
    return mul(b, g, n);
  });
  def1("atan", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom sq = square(b, x);
    Atom d = add(b, const_like(b, x, 1.0), sq);
    return div(b, g, d);
  });
  defjvp("atan2", {[](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
                     Atom xx = square(b, p[0]);
                     Atom yy = square(b, p[1]);
                     Atom d = add(b, xx, yy);
                     Atom q = div(b, p[1], d);
                     return mul(b, g, q);
                   },
                   [](JaxprBuilder& b, const Atom& g, Primals p, const Eqn&) {
                     Atom nx = neg(b, p[0]);
                     Atom xx = square(b, p[0]);
                     Atom yy = square(b, p[1]);
                     Atom d = add(b, xx, yy);
                     Atom q = div(b, nx, d);
                     return mul(b, g, q);
                   }});
  def1("sinh", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom c = cosh(b, x);
    return mul(b, g, c);
  });
  def1("cosh", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom s = sinh(b, x);
    return mul(b, g, s);
  });
  def1("asinh", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom sq = square(b, x);
    Atom s = add(b, sq, one_like(b, x));
    Atom r = rsqrt(b, s);
    return mul(b, g, r);
  });
  def1("acosh", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom sq = square(b, x);
    Atom s = sub(b, sq, one_like(b, x));
    Atom r = rsqrt(b, s);
    return mul(b, g, r);
  });
  def1("atanh", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom s = add(b, one_like(b, x), x);
    Atom r = reciprocal(b, s);
    Atom d = sub(b, one_like(b, x), x);
    Atom q = div(b, g, d);
    return mul(b, r, q);
  });

  def1_ans("exp", [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom&, const Eqn&) {
    return mul(b, g, ans);
  });
  def1_ans("exp2", [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom& x, const Eqn&) {
    Atom ln2 = log(b, const_like(b, x, 2.0));
    Atom ga = mul(b, g, ans);
    return mul(b, ln2, ga);
  });
  def1("log",
       [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) { return div(b, g, x); });
  def1_ans("expm1",
           [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom& x, const Eqn& e) {
             if (accuracy_is_highest(e)) {
               Atom ex = exp(b, x, accuracy_of(e));
               return mul(b, g, ex);
             }
             Atom s = add(b, ans, one_like(b, ans));
             return mul(b, g, s);
           });
  def1("log1p", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom s = add(b, x, one_like(b, x));
    return div(b, g, s);
  });
  def1_ans("tanh",
           [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom& x, const Eqn& e) {
             if (accuracy_is_highest(e)) {
               Atom x2 = mul(b, const_like(b, x, 2.0), x);
               Atom l1 = logistic(b, x2, accuracy_of(e));
               Atom xm2 = mul(b, const_like(b, x, -2.0), x);
               Atom l2 = logistic(b, xm2, accuracy_of(e));
               Atom ll = mul(b, l1, l2);
               Atom s = mul(b, const_like(b, x, 4.0), ll);
               return mul(b, g, s);
             }
             Atom ga = mul(b, g, ans);
             Atom lhs = add(b, g, ga);
             Atom rhs = sub(b, one_like(b, x), ans);
             return mul(b, lhs, rhs);
           });
  def1_ans("logistic",
           [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom& x, const Eqn& e) {
             if (accuracy_is_highest(e)) {
               Atom nx = neg(b, x);
               Atom l = logistic(b, nx, accuracy_of(e));
               Atom s = mul(b, ans, l);
               return mul(b, g, s);
             }
             Atom d = sub(b, one_like(b, ans), ans);
             Atom s = mul(b, ans, d);
             return mul(b, g, s);
           });

  def1("erf", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    return erf_like(b, g, x, 2.0 / std::sqrt(std::numbers::pi));
  });
  def1("erfc", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    return erf_like(b, g, x, -2.0 / std::sqrt(std::numbers::pi));
  });
  def1_ans("erf_inv",
           [](JaxprBuilder& b, const Atom& g, const Atom& ans, const Atom& x, const Eqn&) {
             Atom sq = square(b, ans);
             Atom e = exp(b, sq);
             Atom ge = mul(b, g, e);
             return mul(b, const_like(b, x, std::sqrt(std::numbers::pi) / 2.0), ge);
           });
  def1("lgamma", [](JaxprBuilder& b, const Atom& g, const Atom& x, const Eqn&) {
    Atom d = unary(b, "digamma", x);
    return mul(b, g, d);
  });
  // JAX differentiates digamma with polygamma(1, x), a primitive cjax does not have.
  define_pass_rules("digamma").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    unsupported("jvp: 'digamma' needs the 'polygamma' primitive, which cjax does not provide",
                a.eqn);
  };
}

}  // namespace cjax
