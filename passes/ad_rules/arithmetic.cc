// Autodiff rules of the arithmetic primitives: neg, add, sub, mul, div, add_any.
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"

namespace cjax {

namespace {

// Cotangents for a binary op whose output ct flows unchanged (add) or negated (sub, rhs) into
// each linear operand, summed down to the operand's shape.
std::vector<Cotangent> additive_transpose(const TransposeRuleArgs& a, bool negate_rhs) {
  std::vector<Cotangent> cts(2);
  const Atom& ct = *a.cts[0];
  if (a.args[0].linear) cts[0] = ad::unbroadcast(a.b, a.args[0].aval(), ct);
  if (a.args[1].linear)
    cts[1] = ad::unbroadcast(a.b, a.args[1].aval(), negate_rhs ? lax::neg(a.b, ct) : ct);
  return cts;
}

// add / sub jvp: a single nonzero tangent passes through (broadcast to the output shape).
JvpRule additive_jvp(bool is_sub) {
  return [is_sub](const JvpRuleArgs& a) -> std::vector<Tangent> {
    const Shape& shape = a.primal_outs[0].aval().shape;
    const Tangent& x = a.tangents[0];
    const Tangent& y = a.tangents[1];
    if (x && y) return {a.b.emit1(is_sub ? "sub" : "add", {*x, *y})};
    if (x) return {ad::maybe_broadcast(a.b, shape, *x)};
    Atom t = is_sub ? lax::neg(a.b, *y) : *y;
    return {ad::maybe_broadcast(a.b, shape, t)};
  };
}

}  // namespace

void register_arithmetic_ad_rules() {
  ad::deflinear("neg", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{lax::neg(a.b, *a.cts[0])};
  });

  register_jvp_rule("add", additive_jvp(false));
  register_transpose_rule("add", [](const TransposeRuleArgs& a) { return additive_transpose(a, false); });
  register_jvp_rule("sub", additive_jvp(true));
  register_transpose_rule("sub", [](const TransposeRuleArgs& a) { return additive_transpose(a, true); });
  ad::deflinear("add_any", [](const TransposeRuleArgs& a) { return additive_transpose(a, false); });

  ad::defjvp("mul", {[](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) { return lax::mul(b, g, p[1]); },
                     [](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) { return lax::mul(b, p[0], g); }});
  register_transpose_rule("mul", [](const TransposeRuleArgs& a) {
    std::vector<Cotangent> cts(2);
    const Atom& ct = *a.cts[0];
    if (a.args[0].linear && !a.args[1].linear)
      cts[0] = ad::unbroadcast(a.b, a.args[0].aval(), lax::mul(a.b, ct, a.args[1].value));
    if (a.args[1].linear && !a.args[0].linear)
      cts[1] = ad::unbroadcast(a.b, a.args[1].aval(), lax::mul(a.b, a.args[0].value, ct));
    if (a.args[0].linear && a.args[1].linear)
      throw UnsupportedError("transpose: mul of two linear values is not linear (from " +
                             a.eqn.source.summarize() + ")");
    return cts;
  });

  ad::defjvp("div", {[](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) { return lax::div(b, g, p[1]); },
                     [](JaxprBuilder& b, const Atom& g, auto p, const Eqn&) {
                       Atom num = lax::mul(b, lax::neg(b, g), p[0]);
                       Atom inv_sq = b.emit1("integer_pow", {p[1]}, {{"y", int64_t{-2}}});
                       return lax::mul(b, num, inv_sq);
                     }});
  register_transpose_rule("div", [](const TransposeRuleArgs& a) {
    if (a.args[1].linear)
      throw UnsupportedError("transpose: div is not linear in its divisor (from " +
                             a.eqn.source.summarize() + ")");
    return std::vector<Cotangent>{
        ad::unbroadcast(a.b, a.args[0].aval(), lax::div(a.b, *a.cts[0], a.args[1].value)), std::nullopt};
  });
}

}  // namespace cjax
