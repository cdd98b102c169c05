// Autodiff rules of the transcendental primitives.
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"

namespace cjax {

void register_transcendental_ad_rules() {
  ad::defjvp("sin", {[](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) {
               return lax::mul(b, g, lax::cos(b, p[0]));
             }});
  ad::defjvp("cos", {[](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) {
               return lax::neg(b, lax::mul(b, g, lax::sin(b, p[0])));
             }});
  ad::defjvp2("exp", {[](JaxprBuilder& b, const Atom& g, const Atom& ans, auto, const Eqn&) {
                return lax::mul(b, g, ans);
              }});
  ad::defjvp("log", {[](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) {
               return lax::div(b, g, p[0]);
             }});
  // tanh: mul(add(g, mul(g, ans)), sub(1, ans)), JAX's default-accuracy form.
  ad::defjvp2("tanh", {[](JaxprBuilder& b, const Atom& g, const Atom& ans, auto p, const Eqn&) {
                Atom lhs = lax::add(b, g, lax::mul(b, g, ans));
                return lax::mul(b, lhs, lax::sub(b, lax::scalar_like(p[0], 1.0), ans));
              }});
  // logistic: mul(g, mul(ans, sub(1, ans))).
  ad::defjvp2("logistic", {[](JaxprBuilder& b, const Atom& g, const Atom& ans, auto, const Eqn&) {
                return lax::mul(b, g, lax::mul(b, ans, lax::sub(b, lax::scalar_like(ans, 1.0), ans)));
              }});
}

}  // namespace cjax
