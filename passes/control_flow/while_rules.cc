// The rules of `while`: jvp with a fixpoint on which carries have tangents (the cond ignores the
// tangents); partial evaluation that computes the known carries in a known while when the
// condition only reads known values, and stages a while that recomputes everything otherwise;
// and a transpose rule that fails clearly, as JAX's does: a loop with a dynamic trip count cannot
// be reversed.
#include <fmt/format.h>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/control_flow/cf_util.h"
#include "passes/control_flow/register.h"
#include "passes/dce.h"
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

struct WhileShape {
  size_t cn, bn, nk;
};

WhileShape while_shape(const Eqn& eqn) {
  WhileShape s;
  s.cn = static_cast<size_t>(eqn.params.get_int("cond_nconsts"));
  s.bn = static_cast<size_t>(eqn.params.get_int("body_nconsts"));
  if (s.cn + s.bn > eqn.inputs.size()) throw Error("while: the consts do not fit the operands");
  s.nk = eqn.inputs.size() - s.cn - s.bn;
  return s;
}

Params while_params(const Params& params, Jaxpr cond, Jaxpr body, size_t cn, size_t bn) {
  Params out = params;
  out.set("cond_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(cf::fresh_copy(cond))));
  out.set("body_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(cf::fresh_copy(body))));
  out.set("cond_nconsts", static_cast<int64_t>(cn));
  out.set("body_nconsts", static_cast<int64_t>(bn));
  return out;
}

JvpFullResult while_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                        std::span<const Tangent> tangents) {
  const Jaxpr& cond = cf::body_param(eqn, "cond_jaxpr");
  const Jaxpr& body = cf::body_param(eqn, "body_jaxpr");
  WhileShape s = while_shape(eqn);
  std::vector<bool> nz;
  for (size_t i = s.cn; i < tangents.size(); ++i) nz.push_back(tangents[i].has_value());
  nz = cf::differentiable(body, nz);
  std::vector<bool> bconst_nz = slice(nz, 0, s.bn), carry_nz = slice(nz, s.bn, s.nk);
  const JvpJaxpr j = cf::carry_fixpoint(
      carry_nz,
      [&](const std::vector<bool>& carry) {
        return cf::jvp_instantiate(body, concat(bconst_nz, carry), carry);
      },
      [&](const JvpJaxpr& r) { return slice(r.out_nonzero, 0, s.nk); });
  size_t nbt = cf::count(bconst_nz), nkt = cf::count(carry_nz);
  size_t n = body.invars.size();
  Jaxpr new_body = j.jaxpr;
  new_body.invars = slice(j.jaxpr.invars, 0, s.bn);
  new_body.invars = concat(new_body.invars, slice(j.jaxpr.invars, n, nbt));
  new_body.invars = concat(new_body.invars, slice(j.jaxpr.invars, s.bn, s.nk));
  new_body.invars = concat(new_body.invars, slice(j.jaxpr.invars, n + nbt, nkt));
  Jaxpr new_cond = cond;
  for (size_t i = 0; i < s.nk; ++i)
    if (carry_nz[i]) new_cond.invars.emplace_back(cond.invars[s.cn + i].aval());

  std::vector<Atom> inputs(primals.begin(),
                           primals.begin() + static_cast<std::ptrdiff_t>(s.cn + s.bn));
  for (size_t i = 0; i < s.bn; ++i)
    if (bconst_nz[i]) inputs.push_back(*tangents[s.cn + i]);
  for (size_t i = 0; i < s.nk; ++i) inputs.push_back(primals[s.cn + s.bn + i]);
  for (size_t i = 0; i < s.nk; ++i) {
    if (!carry_nz[i]) continue;
    const Tangent& t = tangents[s.cn + s.bn + i];
    const ShapedArray& a = body.invars[s.bn + i].aval();
    inputs.push_back(t ? *t
                       : lax_ops::zeros_like_aval(b, ShapedArray(a.dtype, a.shape, a.weak_type)));
  }
  std::vector<Var> outs =
      b.emit(*eqn.prim, std::move(inputs),
             while_params(eqn.params, std::move(new_cond), std::move(new_body), s.cn, s.bn + nbt));
  JvpFullResult r;
  size_t next = s.nk;
  for (size_t i = 0; i < s.nk; ++i) {
    r.primal_outs.push_back(outs[i]);
    r.tangent_outs.push_back(carry_nz[i] ? Tangent(outs[next++]) : Tangent());
  }
  return r;
}

PartialEvalRuleResult while_partial_eval(const Eqn& eqn, const std::vector<bool>& in_unknown) {
  const Jaxpr& cond = cf::body_param(eqn, "cond_jaxpr");
  const Jaxpr& body = cf::body_param(eqn, "body_jaxpr");
  WhileShape s = while_shape(eqn);
  std::vector<bool> cconst_uk = slice(in_unknown, 0, s.cn),
                    bconst_uk = slice(in_unknown, s.cn, s.bn),
                    carry_uk = slice(in_unknown, s.cn + s.bn, s.nk);
  PartialEvalResult pe = cf::carry_fixpoint(
      carry_uk,
      [&](const std::vector<bool>& carry) {
        return partial_eval(body, concat(bconst_uk, carry), carry);
      },
      [&](const PartialEvalResult& r) { return slice(r.out_unknown, 0, s.nk); });
  PartialEvalRuleResult r;
  std::vector<bool> cond_reads = dce(cond, {true}).used_inputs;
  bool cond_unknown = false;
  for (size_t i = 0; i < s.cn; ++i) cond_unknown |= cond_reads[i] && cconst_uk[i];
  for (size_t i = 0; i < s.nk; ++i) cond_unknown |= cond_reads[s.cn + i] && carry_uk[i];
  r.out_unknown = carry_uk;
  if (cond_unknown || cf::count(carry_uk) == s.nk) {
    // Nothing can be computed ahead: the whole loop is staged.
    r.staged_eqn = eqn;
    r.out_unknown.assign(s.nk, true);
    r.outputs.assign(eqn.outputs.begin(), eqn.outputs.end());
    return r;
  }
  // The known loop: the known carries, with the condition reading only those.
  size_t n_known = s.nk - cf::count(carry_uk);
  DceResult kb = dce(pe.known, concat(std::vector<bool>(n_known, true),
                                      std::vector<bool>(pe.residuals.size(), false)));
  Jaxpr kbody = std::move(kb.jaxpr);  // (known body consts, known carries) -> known carries
  Jaxpr kcond = cond;
  kcond.invars = select(cond.invars, concat(std::vector<bool>(s.cn, false), carry_uk), false);
  std::vector<Atom> k_in = slice(eqn.inputs, 0, s.cn);
  for (const Atom& a : select(slice(eqn.inputs, s.cn, s.bn), bconst_uk, false)) k_in.push_back(a);
  for (const Atom& a : select(slice(eqn.inputs, s.cn + s.bn, s.nk), carry_uk, false))
    k_in.push_back(a);
  Eqn known = cf::make_eqn("while", std::move(k_in),
                           while_params(eqn.params, std::move(kcond), std::move(kbody), s.cn,
                                        s.bn - cf::count(bconst_uk)),
                           eqn.source);
  // The staged loop recomputes every carry (JAX's too: its trip count is not known ahead).
  Eqn staged = eqn;
  for (Var& o : staged.outputs) o = Var(o.aval());
  size_t next_k = 0;
  for (size_t i = 0; i < s.nk; ++i)
    r.outputs.push_back(carry_uk[i] ? Atom(staged.outputs[i]) : Atom(known.outputs[next_k++]));
  r.known_eqns.push_back(std::move(known));
  r.staged_eqn = std::move(staged);
  return r;
}

// partial_eval_jaxpr_custom's rule: as while_partial_eval (the policy has nothing to choose: the
// staged loop recomputes every carry).
CustomRuleResult while_partial_eval_custom(const Eqn& eqn, const std::vector<bool>& unks_in,
                                           const std::vector<bool>& inst_in, const PolicyRef&) {
  CustomRuleResult r;
  bool any_unknown = false;
  for (bool u : unks_in) any_unknown |= u;
  if (!any_unknown) {
    r.known_eqns.push_back(eqn);
    r.unks_out.assign(eqn.outputs.size(), false);
    r.inst_out.assign(eqn.outputs.size(), false);
    return r;
  }
  PartialEvalRuleResult pe = while_partial_eval(eqn, unks_in);
  Eqn staged = *pe.staged_eqn;
  // The outputs keep their vars on the side that computes them.
  size_t next_known = 0;
  for (size_t i = 0; i < eqn.outputs.size(); ++i) {
    if (pe.out_unknown[i])
      staged.outputs[i] = eqn.outputs[i];
    else if (!pe.known_eqns.empty())
      pe.known_eqns[0].outputs[next_known++] = eqn.outputs[i];
  }
  r.known_eqns = std::move(pe.known_eqns);
  r.residuals = cf::staged_residuals(eqn, unks_in, inst_in, r.known_eqns, staged);
  r.staged_eqns.push_back(std::move(staged));
  r.unks_out = pe.out_unknown;
  r.inst_out = pe.out_unknown;
  return r;
}

std::vector<Cotangent> while_transpose(const TransposeRuleArgs& a) {
  throw UnsupportedError(fmt::format(
      "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
      "dynamic start/stop values (the while loop at {}). Try using lax.scan, or using fori_loop "
      "with static start/stop, or give cjax::while_loop a bound: {{.max_iters = N}}.",
      a.eqn.source.summarize()));
}

}  // namespace

void register_while_rules() {
  PassRules& r = define_pass_rules("while");
  r.jvp_full = while_jvp;
  r.partial_eval = while_partial_eval;
  r.transpose = while_transpose;
  r.partial_eval_custom = while_partial_eval_custom;
}

}  // namespace cjax
