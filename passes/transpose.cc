#include "passes/transpose.h"

#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/lax/lax.h"
#include "passes/partial_eval.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

// Transposes a jaxpr whose eqns all read a linear value (or only feed ones that do).
Jaxpr transpose_linear(const Jaxpr& jaxpr, const std::vector<bool>& linear,
                       std::vector<bool>* ct_is_zero) {
  // Which vars depend on a linear input.
  std::unordered_set<Var, VarHash> is_linear;
  for (size_t i = 0; i < linear.size(); ++i)
    if (linear[i]) is_linear.insert(jaxpr.invars[i]);
  auto atom_linear = [&](const Atom& a) { return a.is_var() && is_linear.count(a.var()); };

  JaxprBuilder b;
  std::vector<const Eqn*> linear_eqns;
  for (const Eqn& eqn : jaxpr.eqns) {
    bool any = false;
    for (const Atom& in : eqn.inputs) any |= atom_linear(in);
    if (any) {
      for (const Var& o : eqn.outputs) is_linear.insert(o);
      linear_eqns.push_back(&eqn);
    } else {
      b.append(eqn);  // non-linear: evaluated forward, before the backward pass
    }
  }

  std::unordered_map<Var, Atom, VarHash> ct_env;
  auto add_ct = [&](const Var& v, const Atom& ct) {
    auto it = ct_env.find(v);
    if (it == ct_env.end())
      ct_env.emplace(v, ct);
    else
      it->second = lax_ops::add_any(b, it->second, ct);
  };

  std::vector<Var> ct_invars;
  for (const Atom& out : jaxpr.outvars) {
    Var ct(ShapedArray(out.aval().dtype, out.aval().shape));
    ct_invars.push_back(ct);
    if (atom_linear(out)) add_ct(out.var(), ct);
  }

  for (auto it = linear_eqns.rbegin(); it != linear_eqns.rend(); ++it) {
    const Eqn& eqn = **it;
    std::vector<Cotangent> cts;
    bool any = false;
    for (const Var& o : eqn.outputs) {
      auto found = ct_env.find(o);
      cts.push_back(found == ct_env.end() ? Cotangent() : Cotangent(found->second));
      any |= cts.back().has_value();
    }
    if (!any) continue;
    const TransposeRule& rule = pass_rules(*eqn.prim).transpose;
    if (!rule)
      throw UnsupportedError(fmt::format("transpose: no transpose rule for '{}' (from {})",
                                         eqn.prim->name, eqn.source.summarize()));
    std::vector<TransposeArg> args;
    for (const Atom& in : eqn.inputs) args.push_back({atom_linear(in), in});
    b.set_source(eqn.source);
    std::vector<Cotangent> in_cts = rule(TransposeRuleArgs{b, eqn, args, cts});
    for (size_t i = 0; i < eqn.inputs.size() && i < in_cts.size(); ++i)
      if (in_cts[i] && args[i].linear) add_ct(eqn.inputs[i].var(), *in_cts[i]);
  }

  b.set_source({});
  std::vector<Var> invars;
  std::vector<Atom> outvars;
  for (size_t i = 0; i < linear.size(); ++i) {
    const Var& v = jaxpr.invars[i];
    if (!linear[i]) {
      invars.push_back(v);
      continue;
    }
    auto found = ct_env.find(v);
    if (ct_is_zero) ct_is_zero->push_back(found == ct_env.end());
    outvars.push_back(found != ct_env.end() ? found->second
                                            : lax_ops::zeros_like_aval(
                                                  b, ShapedArray(v.aval().dtype, v.aval().shape)));
  }
  invars.insert(invars.end(), ct_invars.begin(), ct_invars.end());
  return b.build(std::move(invars), std::move(outvars), jaxpr.constvars, jaxpr.consts);
}

}  // namespace

// As JAX's transpose_jaxpr does, the non-linear part is first split off by partial evaluation
// (linear inputs unknown), which also splits higher-order eqns such as a nested remat2 into the
// primal computation they owe the forward direction and a purely linear remainder; the known
// eqns run first, then the linear remainder is transposed.
Jaxpr transpose_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& linear,
                      std::vector<bool>* ct_is_zero) {
  if (ct_is_zero) ct_is_zero->clear();
  if (linear.size() != jaxpr.invars.size())
    throw Error(fmt::format("transpose: {} linear flags for {} inputs", linear.size(),
                            jaxpr.invars.size()));
  PartialEvalResult pe =
      partial_eval(jaxpr, linear, std::vector<bool>(jaxpr.outvars.size(), false));
  std::vector<bool> staged_linear(pe.residuals.size(), false);
  staged_linear.resize(pe.staged.invars.size(), true);
  Jaxpr lin_t = transpose_linear(pe.staged, staged_linear, ct_is_zero);

  Jaxpr out;
  out.constvars = jaxpr.constvars;
  out.consts = jaxpr.consts;
  for (size_t i = 0; i < linear.size(); ++i)
    if (!linear[i]) out.invars.push_back(jaxpr.invars[i]);
  // One cotangent input per original output; those of outputs that do not depend linearly on
  // the inputs are accepted and ignored.
  size_t next_ct = pe.residuals.size();
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    if (pe.out_unknown[i]) {
      out.invars.push_back(lin_t.invars[next_ct++]);
    } else {
      const ShapedArray& a = jaxpr.outvars[i].aval();
      out.invars.emplace_back(ShapedArray(a.dtype, a.shape));
    }
  }
  out.eqns = std::move(pe.known.eqns);
  for (Eqn& e : lin_t.eqns) out.eqns.push_back(std::move(e));
  out.outvars = std::move(lin_t.outvars);
  return out;
}

}  // namespace cjax
