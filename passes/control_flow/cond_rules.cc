// The rules of `cond` (JAX's jax/_src/lax/control_flow/conditionals.py): jvp of every branch with
// the union of their nonzero output tangents; partial evaluation with a known index, where each
// branch's known part returns the residuals of every branch (zeros for the others') so both
// conds keep one signature; transpose branch by branch; dce with the union of the branches' needs.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/control_flow/cf_util.h"
#include "passes/control_flow/register.h"
#include "passes/dce.h"
#include "passes/inline.h"
#include "passes/jvp.h"
#include "passes/lax/lax.h"
#include "passes/partial_eval.h"
#include "passes/primitive_rules.h"
#include "passes/remat.h"
#include "passes/transpose.h"
#include "passes/util.h"

namespace cjax {
namespace {

using cf::concat;
using cf::slice;

JvpFullResult cond_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                       std::span<const Tangent> tangents) {
  std::vector<const Jaxpr*> branches = cf::branches_param(eqn);
  std::vector<bool> nz;
  for (size_t i = 1; i < tangents.size(); ++i) nz.push_back(tangents[i].has_value());
  nz = cf::differentiable(*branches[0], nz);
  size_t n_out = branches[0]->outvars.size();
  std::vector<bool> out_nz(n_out, false);
  for (const Jaxpr* br : branches)
    out_nz = cf::bool_or(out_nz, jvp_jaxpr(*br, nz, false).out_nonzero);
  std::vector<Jaxpr> jvps;
  for (const Jaxpr* br : branches) jvps.push_back(cf::jvp_instantiate(*br, nz, out_nz).jaxpr);
  std::vector<Atom> inputs(primals.begin(), primals.end());
  for (size_t i = 0; i < nz.size(); ++i)
    if (nz[i]) inputs.push_back(*tangents[i + 1]);
  std::vector<Var> outs =
      b.emit(*eqn.prim, std::move(inputs), cf::with_branches(eqn.params, std::move(jvps)));
  JvpFullResult r;
  size_t next = n_out;
  for (size_t i = 0; i < n_out; ++i) {
    r.primal_outs.push_back(outs[i]);
    r.tangent_outs.push_back(out_nz[i] ? Tangent(outs[next++]) : Tangent());
  }
  return r;
}

// Splits every branch with `split` (which reads `out_uk`, the outputs to stage) until the outputs
// unknown in any branch are unknown in all; returns the branches' splits at that fixpoint.
template <class Split>
auto split_branches(const std::vector<const Jaxpr*>& branches, std::vector<bool>& out_uk,
                    const Split& split) {
  std::vector<decltype(split(*branches[0]))> pes;
  for (;;) {
    pes.clear();
    std::vector<bool> joined = out_uk;
    for (const Jaxpr* br : branches) {
      pes.push_back(split(*br));
      joined = cf::bool_or(joined, pes.back().out_unknown);
    }
    if (joined == out_uk) return pes;
    out_uk = joined;
  }
}

PartialEvalRuleResult cond_partial_eval(const Eqn& eqn, const std::vector<bool>& in_unknown) {
  PartialEvalRuleResult out;
  if (in_unknown[0]) {  // an unknown index: everything is staged
    out.staged_eqn = eqn;
    out.out_unknown.assign(eqn.outputs.size(), true);
    out.outputs.assign(eqn.outputs.begin(), eqn.outputs.end());
    return out;
  }
  std::vector<const Jaxpr*> branches = cf::branches_param(eqn);
  std::vector<bool> ops_uk = slice(in_unknown, 1, in_unknown.size() - 1);
  size_t n_out = branches[0]->outvars.size();
  std::vector<bool> out_uk(n_out, false);
  std::vector<PartialEvalResult> pes = split_branches(
      branches, out_uk, [&](const Jaxpr& br) { return partial_eval(br, ops_uk, out_uk); });
  // Every branch's known part returns all residuals: its own, and zeros for the others'.
  size_t n_known_out = n_out - cf::count(out_uk);
  std::vector<ShapedArray> res_avals;
  std::vector<size_t> res_start;
  for (const PartialEvalResult& pe : pes) {
    res_start.push_back(res_avals.size());
    for (const Var& r : pe.residuals) res_avals.push_back(r.aval());
  }
  std::vector<Jaxpr> known_branches, staged_branches;
  for (size_t k = 0; k < pes.size(); ++k) {
    PartialEvalResult& pe = pes[k];
    JaxprBuilder kb;
    for (Eqn& e : pe.known.eqns) kb.append(std::move(e));
    std::vector<Atom> kouts = slice(pe.known.outvars, 0, n_known_out);
    for (size_t r = 0; r < res_avals.size(); ++r) {
      if (r >= res_start[k] && r < res_start[k] + pe.residuals.size())
        kouts.push_back(pe.residuals[r - res_start[k]]);
      else
        kouts.push_back(lax_ops::zeros_like_aval(kb, res_avals[r]));
    }
    known_branches.push_back(kb.build(pe.known.invars, std::move(kouts)));
    Jaxpr st = pe.staged;
    std::vector<Var> invars;
    for (size_t r = 0; r < res_avals.size(); ++r) {
      if (r >= res_start[k] && r < res_start[k] + pe.residuals.size())
        invars.push_back(pe.staged.invars[r - res_start[k]]);
      else
        invars.emplace_back(res_avals[r]);
    }
    for (size_t i = pe.residuals.size(); i < pe.staged.invars.size(); ++i)
      invars.push_back(pe.staged.invars[i]);
    st.invars = std::move(invars);
    staged_branches.push_back(std::move(st));
  }
  std::vector<Atom> k_in{eqn.inputs[0]};
  for (const Atom& a : select(slice(eqn.inputs, 1, ops_uk.size()), ops_uk, false))
    k_in.push_back(a);
  Eqn known = cf::make_eqn("cond", std::move(k_in),
                           cf::with_branches(eqn.params, std::move(known_branches)), eqn.source);
  std::vector<Atom> s_in{eqn.inputs[0]};
  for (size_t r = 0; r < res_avals.size(); ++r) s_in.push_back(known.outputs[n_known_out + r]);
  for (const Atom& a : select(slice(eqn.inputs, 1, ops_uk.size()), ops_uk)) s_in.push_back(a);
  Eqn staged = cf::make_eqn("cond", std::move(s_in),
                            cf::with_branches(eqn.params, std::move(staged_branches)), eqn.source);
  out.out_unknown = out_uk;
  size_t next_k = 0, next_s = 0;
  for (size_t i = 0; i < n_out; ++i)
    out.outputs.push_back(out_uk[i] ? Atom(staged.outputs[next_s++])
                                    : Atom(known.outputs[next_k++]));
  if (!known.outputs.empty()) out.known_eqns.push_back(std::move(known));
  out.staged_eqn = std::move(staged);
  return out;
}

// partial_eval_jaxpr_custom's rule: with a known index every branch is split with the policy
// and the residuals joined as in cond_partial_eval; an unknown index stages the whole cond.
CustomRuleResult cond_partial_eval_custom(const Eqn& eqn, const std::vector<bool>& unks_in,
                                          const std::vector<bool>& inst_in,
                                          const PolicyRef& policy) {
  CustomRuleResult r;
  size_t n_out = eqn.outputs.size();
  bool any_unknown = false;
  for (bool u : unks_in) any_unknown |= u;
  if (unks_in[0] || !any_unknown) {
    // An unknown index: everything is staged. All known: the cond is one known eqn (its
    // outputs are residuals where staged eqns read them).
    if (unks_in[0]) {
      r.staged_eqns.push_back(eqn);
      r.unks_out.assign(n_out, true);
      r.inst_out.assign(n_out, true);
      r.residuals = cf::staged_residuals(eqn, unks_in, inst_in, {}, eqn);
    } else {
      r.known_eqns.push_back(eqn);
      r.unks_out.assign(n_out, false);
      r.inst_out.assign(n_out, false);
    }
    return r;
  }
  std::vector<const Jaxpr*> branches = cf::branches_param(eqn);
  size_t n_ops = unks_in.size() - 1;
  std::vector<bool> ops_uk = slice(unks_in, 1, n_ops), all(n_ops, true);
  std::vector<bool> out_uk(n_out, false);
  std::vector<CustomPartialEval> pes = split_branches(branches, out_uk, [&](const Jaxpr& br) {
    return partial_eval_jaxpr_custom(br, ops_uk, all, out_uk, out_uk, policy);
  });
  size_t n_known_out = n_out - cf::count(out_uk);
  std::vector<ShapedArray> res_avals;
  std::vector<size_t> res_start;
  for (const CustomPartialEval& pe : pes) {
    res_start.push_back(res_avals.size());
    for (size_t i = pe.known.outvars.size() - pe.num_residuals; i < pe.known.outvars.size(); ++i)
      res_avals.push_back(pe.known.outvars[i].aval());
  }
  std::vector<Jaxpr> known_branches, staged_branches;
  for (size_t k = 0; k < pes.size(); ++k) {
    CustomPartialEval& pe = pes[k];
    size_t own = pe.num_residuals, first = pe.known.outvars.size() - own;
    JaxprBuilder kb;
    for (Eqn& e : pe.known.eqns) kb.append(std::move(e));
    std::vector<Atom> kouts = slice(pe.known.outvars, 0, n_known_out);
    for (size_t i = 0; i < res_avals.size(); ++i) {
      if (i >= res_start[k] && i < res_start[k] + own)
        kouts.push_back(pe.known.outvars[first + i - res_start[k]]);
      else
        kouts.push_back(lax_ops::zeros_like_aval(kb, res_avals[i]));
    }
    known_branches.push_back(dce(kb.build(pe.known.invars, std::move(kouts))));
    // The staged branch: (all residuals..., every operand...) -> (unknown outputs...).
    std::vector<Var> invars;
    for (size_t i = 0; i < res_avals.size(); ++i) {
      if (i >= res_start[k] && i < res_start[k] + own)
        invars.push_back(pe.staged.invars[i - res_start[k]]);
      else
        invars.emplace_back(res_avals[i]);
    }
    for (size_t i = own; i < pe.staged.invars.size(); ++i) invars.push_back(pe.staged.invars[i]);
    std::vector<Atom> souts;
    size_t next = 0;
    for (size_t i = 0; i < n_out; ++i) {
      if (!pe.out_inst[i]) continue;
      const Atom& o = pe.staged.outvars[next++];
      if (out_uk[i]) souts.push_back(o);
    }
    Jaxpr st = pe.staged;
    st.invars = std::move(invars);
    st.outvars = std::move(souts);
    staged_branches.push_back(dce(st));
  }
  Eqn known;
  known.prim = eqn.prim;
  known.source = eqn.source;
  known.inputs = {eqn.inputs[0]};
  for (const Atom& a : select(slice(eqn.inputs, 1, n_ops), ops_uk, false))
    known.inputs.push_back(a);
  known.outputs = select(eqn.outputs, out_uk, false);
  for (const ShapedArray& a : res_avals) known.outputs.emplace_back(a);
  known.params = cf::with_branches(eqn.params, std::move(known_branches));
  Eqn staged;
  staged.prim = eqn.prim;
  staged.source = eqn.source;
  staged.inputs = {eqn.inputs[0]};
  for (size_t i = 0; i < res_avals.size(); ++i)
    staged.inputs.push_back(known.outputs[n_known_out + i]);
  for (size_t i = 1; i < eqn.inputs.size(); ++i) staged.inputs.push_back(eqn.inputs[i]);
  staged.outputs = select(eqn.outputs, out_uk);
  staged.params = cf::with_branches(eqn.params, std::move(staged_branches));
  r.known_eqns.push_back(std::move(known));
  r.residuals = cf::staged_residuals(eqn, unks_in, inst_in, r.known_eqns, staged);
  r.staged_eqns.push_back(std::move(staged));
  r.unks_out = out_uk;
  r.inst_out = out_uk;
  return r;
}

std::vector<Cotangent> cond_transpose(const TransposeRuleArgs& a) {
  if (a.args[0].linear) throw Error("cond transpose: the branch index cannot be linear");
  std::vector<const Jaxpr*> branches = cf::branches_param(a.eqn);
  std::vector<bool> lin, ct_nz;
  for (size_t i = 1; i < a.args.size(); ++i) lin.push_back(a.args[i].linear);
  for (const Cotangent& c : a.cts) ct_nz.push_back(c.has_value());
  std::vector<Jaxpr> ts;
  for (const Jaxpr* br : branches) ts.push_back(transpose_jaxpr(dce(*br, ct_nz).jaxpr, lin));
  // Branches may differ in the weak type of their results; use the first's types.
  std::vector<Atom> inputs{a.args[0].value};
  for (size_t i = 1; i < a.args.size(); ++i)
    if (!a.args[i].linear) inputs.push_back(a.args[i].value);
  for (const Cotangent& c : a.cts)
    if (c) inputs.push_back(*c);
  for (Jaxpr& t : ts) {
    JaxprBuilder fb;
    for (Eqn& e : t.eqns) fb.append(std::move(e));
    std::vector<Atom> outs;
    for (size_t i = 0; i < t.outvars.size(); ++i) {
      const ShapedArray& want = ts[0].outvars[i].aval();
      outs.push_back(
          t.outvars[i].aval().weak_type == want.weak_type
              ? t.outvars[i]
              : lax_ops::convert_element_type(fb, t.outvars[i], want.dtype, want.weak_type));
    }
    t = fb.build(t.invars, std::move(outs), t.constvars, t.consts);
  }
  std::vector<Var> outs =
      a.b.emit(*a.eqn.prim, std::move(inputs), cf::with_branches(a.eqn.params, std::move(ts)));
  std::vector<Cotangent> cts(a.args.size());
  size_t next = 0;
  for (size_t i = 1; i < a.args.size(); ++i)
    if (a.args[i].linear) cts[i] = outs[next++];
  return cts;
}

// Branches with constvars (never built by cjax, possible in parsed text) are kept whole.
std::optional<Eqn> cond_dce(const Eqn& eqn, const std::vector<bool>& used_outputs) {
  if (std::all_of(used_outputs.begin(), used_outputs.end(), [](bool u) { return u; }))
    return std::nullopt;
  const ParamValue& v = eqn.params.at("branches");
  if (!v.is<ParamTuple>()) return std::nullopt;
  for (const ParamValue& b : v.as<ParamTuple>().items)
    if (!b.is<JaxprRef>() || !b.as<JaxprRef>() || !b.as<JaxprRef>()->constvars.empty())
      return std::nullopt;
  std::vector<const Jaxpr*> branches = cf::branches_param(eqn);
  std::vector<bool> used_in(branches[0]->invars.size(), false);
  std::vector<Jaxpr> pruned;
  for (const Jaxpr* br : branches) {
    DceResult r = dce(*br, used_outputs);
    used_in = cf::bool_or(used_in, r.used_inputs);
    pruned.push_back(std::move(r.jaxpr));
  }
  for (Jaxpr& j : pruned) j.invars = select(j.invars, used_in);
  Eqn out = eqn;
  out.inputs = {eqn.inputs[0]};
  for (const Atom& a : select(slice(eqn.inputs, 1, used_in.size()), used_in))
    out.inputs.push_back(a);
  out.outputs = select(eqn.outputs, used_outputs);
  out.params = cf::with_branches(eqn.params, std::move(pruned));
  return out;
}

}  // namespace

void register_cond_rules() {
  PassRules& r = define_pass_rules("cond");
  r.jvp_full = cond_jvp;
  r.partial_eval = cond_partial_eval;
  r.transpose = cond_transpose;
  r.partial_eval_custom = cond_partial_eval_custom;
  r.dce = cond_dce;
}

}  // namespace cjax
