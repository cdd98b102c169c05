#include "passes/jvp.h"

#include <fmt/format.h>

#include <string>
#include <unordered_map>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
bool has_tangent_space(DType t) {
  return is_floating(t);
}

JvpJaxpr jvp_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& nonzero, bool instantiate) {
  if (nonzero.size() != jaxpr.invars.size())
    throw Error(
        fmt::format("jvp: {} nonzero flags for {} inputs", nonzero.size(), jaxpr.invars.size()));

  JaxprBuilder b;
  std::unordered_map<Var, Atom, VarHash> primal_env;
  std::unordered_map<Var, Atom, VarHash> tangent_env;  // only nonzero tangents
  auto primal = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = primal_env.find(a.var());
    return it == primal_env.end() ? a : it->second;
  };
  auto tangent = [&](const Atom& a) -> Tangent {
    if (a.is_literal()) return std::nullopt;
    auto it = tangent_env.find(a.var());
    if (it == tangent_env.end()) return std::nullopt;
    return it->second;
  };

  std::vector<Var> tangent_invars;
  for (size_t i = 0; i < jaxpr.invars.size(); ++i) {
    const Var& v = jaxpr.invars[i];
    if (!nonzero[i] || !has_tangent_space(v.aval().dtype)) continue;
    Var t(ShapedArray(v.aval().dtype, v.aval().shape, v.aval().weak_type));
    tangent_invars.push_back(t);
    tangent_env.emplace(v, t);
  }

  for (const Eqn& eqn : jaxpr.eqns) {
    b.set_source(eqn.source);
    std::vector<Atom> primals;
    std::vector<Tangent> tangents;
    bool any_nonzero = false;
    for (const Atom& in : eqn.inputs) {
      primals.push_back(primal(in));
      tangents.push_back(tangent(in));
      any_nonzero |= tangents.back().has_value();
    }
    const PassRules& rules = pass_rules(*eqn.prim);
    if (any_nonzero && rules.jvp_full) {
      JvpFullResult r = rules.jvp_full(b, eqn, primals, tangents);
      for (size_t i = 0; i < eqn.outputs.size(); ++i) {
        primal_env.emplace(eqn.outputs[i], r.primal_outs[i]);
        if (r.tangent_outs[i]) tangent_env.emplace(eqn.outputs[i], *r.tangent_outs[i]);
      }
      continue;
    }
    // The primal eqn is copied as it is (same output vars), with renamed inputs.
    Eqn copy = eqn;
    copy.inputs = primals;
    b.append(copy);
    if (!any_nonzero) continue;
    if (!rules.jvp)
      throw UnsupportedError(fmt::format("jvp: no differentiation rule for '{}' (from {})",
                                         eqn.prim->name, eqn.source.summarize()));
    std::vector<Tangent> outs = rules.jvp(JvpRuleArgs{b, eqn, primals, tangents, eqn.outputs});
    for (size_t i = 0; i < eqn.outputs.size(); ++i)
      if (i < outs.size() && outs[i] && has_tangent_space(eqn.outputs[i].aval().dtype))
        tangent_env.emplace(eqn.outputs[i], *outs[i]);
  }

  b.set_source({});
  std::vector<Atom> outvars;
  for (const Atom& o : jaxpr.outvars) outvars.push_back(primal(o));
  JvpJaxpr result;
  for (const Atom& o : jaxpr.outvars) {
    Tangent t = tangent(o);
    if (!t && instantiate)
      t = lax_ops::zeros_like_aval(b, ShapedArray(o.aval().dtype, o.aval().shape));
    result.out_nonzero.push_back(t.has_value());
    if (t) outvars.push_back(*t);
  }
  std::vector<Var> invars = jaxpr.invars;
  invars.insert(invars.end(), tangent_invars.begin(), tangent_invars.end());
  result.jaxpr = b.build(std::move(invars), std::move(outvars), jaxpr.constvars, jaxpr.consts);
  result.jaxpr.debug = jaxpr.debug;
  return result;
}

}  // namespace cjax
