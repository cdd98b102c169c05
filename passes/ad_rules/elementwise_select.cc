// Autodiff rules of select_n(which, *cases) (jax/_src/lax/lax.py: _select_jvp,
// _select_transpose_rule). The predicate is never differentiated; the op is linear in the cases.
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

void register_select_ad_rules() {
  // select_n over the case tangents, with zeros (shaped like the first nonzero tangent) standing
  // in for the zero ones.
  define_pass_rules("select_n").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    std::span<const Tangent> cases = a.tangents.subspan(1);
    const Tangent* first = nullptr;
    for (const Tangent& t : cases)
      if (t) {
        first = &t;
        break;
      }
    if (!first) return {std::nullopt};
    Atom z = lax_ops::full_like(a.b, **first, 0.0);
    std::vector<Atom> ts;
    for (const Tangent& t : cases) ts.push_back(t ? *t : z);
    return {lax_ops::select_n(a.b, a.primals[0], ts)};
  };

  // Each linear case gets the cotangent where it was selected and zeros elsewhere.
  define_pass_rules("select_n").transpose = [](const TransposeRuleArgs& a) {
    if (a.args[0].linear)
      ad::unsupported("transpose: select_n is not linear in its predicate", a.eqn);
    const Atom& ct = *a.cts[0];
    const Atom& which = a.args[0].value;
    size_t n = a.args.size() - 1;
    std::vector<Cotangent> cts(a.args.size());
    Atom zeros = lax_ops::full_like(a.b, ct, 0.0);
    if (which.aval().dtype == DType::bool_) {
      if (n == 1) {
        if (a.args[1].linear) cts[1] = ct;
        return cts;
      }
      if (a.args[1].linear) cts[1] = lax_ops::select(a.b, which, zeros, ct);
      if (a.args[2].linear) cts[2] = lax_ops::select(a.b, which, ct, zeros);
      return cts;
    }
    for (size_t i = 0; i < n; ++i) {
      if (!a.args[i + 1].linear) continue;
      Atom hit = lax_ops::eq(a.b, which, lax_ops::const_like(a.b, which, double(i)));
      cts[i + 1] = lax_ops::select(a.b, hit, ct, zeros);
    }
    return cts;
  };
}

}  // namespace cjax
