// The rules of `scan` (JAX's jax/_src/lax/control_flow/loops.py): jvp with a fixpoint on which
// carries have tangents; partial evaluation with a fixpoint on which carries are unknown, where
// loop-invariant residuals are hoisted out of the loop (computed once) and per-iteration ones are
// stacked as extra outputs of the known scan (residuals that are just scanned-over inputs are
// forwarded, not copied); transpose as a scan in the other direction; dce with a fixpoint on the
// carries that are needed.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include <unordered_map>
#include <unordered_set>

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

struct ScanShape {
  size_t nc, nk, nx, ny;  // consts, carries, xs, ys
  int64_t length;
  bool reverse;
};

ScanShape scan_shape(const Eqn& eqn, const Jaxpr& body) {
  ScanShape s;
  s.nc = static_cast<size_t>(eqn.params.get_int("num_consts"));
  s.nk = static_cast<size_t>(eqn.params.get_int("num_carry"));
  s.length = eqn.params.get_int("length");
  s.reverse = eqn.params.get_bool("reverse");
  if (s.nc + s.nk > body.invars.size() || s.nk > body.outvars.size())
    throw Error("scan: num_consts/num_carry do not fit the body");
  s.nx = body.invars.size() - s.nc - s.nk;
  s.ny = body.outvars.size() - s.nk;
  return s;
}

// ---- jvp ---------------------------------------------------------------------------------------

JvpFullResult scan_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                       std::span<const Tangent> tangents) {
  const Jaxpr& body = cf::body_param(eqn, "jaxpr");
  ScanShape s = scan_shape(eqn, body);
  std::vector<bool> nz;
  for (const Tangent& t : tangents) nz.push_back(t.has_value());
  nz = cf::differentiable(body, nz);
  std::vector<bool> const_nz = slice(nz, 0, s.nc), carry_nz = slice(nz, s.nc, s.nk),
                    xs_nz = slice(nz, s.nc + s.nk, s.nx);
  // Fixpoint: a carry has a tangent if its initial value or its new value (given the carries
  // that have one) does.
  const JvpJaxpr j = cf::carry_fixpoint(
      carry_nz,
      [&](const std::vector<bool>& carry) {
        return cf::jvp_instantiate(body, concat(concat(const_nz, carry), xs_nz),
                                   concat(carry, std::vector<bool>(s.ny, false)));
      },
      [&](const JvpJaxpr& r) { return slice(r.out_nonzero, 0, s.nk); });
  std::vector<bool> ys_nz = slice(j.out_nonzero, s.nk, s.ny);

  // Regroup the jvp body: (consts, const tangents, carry, carry tangents, xs, xs tangents) ->
  // (carry, carry tangents, ys, ys tangents).
  size_t n = body.invars.size();
  size_t nct = cf::count(const_nz), nkt = cf::count(carry_nz), nxt = cf::count(xs_nz);
  const std::vector<Var>& iv = j.jaxpr.invars;
  std::vector<Var> invars = slice(iv, 0, s.nc);
  invars = concat(invars, slice(iv, n, nct));
  invars = concat(invars, slice(iv, s.nc, s.nk));
  invars = concat(invars, slice(iv, n + nct, nkt));
  invars = concat(invars, slice(iv, s.nc + s.nk, s.nx));
  invars = concat(invars, slice(iv, n + nct + nkt, nxt));
  size_t m = body.outvars.size(), nyt = cf::count(ys_nz);
  const std::vector<Atom>& ov = j.jaxpr.outvars;
  std::vector<Atom> outvars = slice(ov, 0, s.nk);
  outvars = concat(outvars, slice(ov, m, nkt));
  outvars = concat(outvars, slice(ov, s.nk, s.ny));
  outvars = concat(outvars, slice(ov, m + nkt, nyt));
  Jaxpr new_body = j.jaxpr;
  new_body.invars = std::move(invars);
  new_body.outvars = std::move(outvars);

  std::vector<Atom> inputs(primals.begin(), primals.begin() + static_cast<std::ptrdiff_t>(s.nc));
  for (size_t i = 0; i < s.nc; ++i)
    if (const_nz[i]) inputs.push_back(*tangents[i]);
  for (size_t i = s.nc; i < s.nc + s.nk; ++i) inputs.push_back(primals[i]);
  for (size_t i = 0; i < s.nk; ++i) {
    if (!carry_nz[i]) continue;
    const Tangent& t = tangents[s.nc + i];
    const ShapedArray& a = body.invars[s.nc + i].aval();
    inputs.push_back(t ? *t
                       : lax_ops::zeros_like_aval(b, ShapedArray(a.dtype, a.shape, a.weak_type)));
  }
  for (size_t i = s.nc + s.nk; i < n; ++i) inputs.push_back(primals[i]);
  for (size_t i = 0; i < s.nx; ++i)
    if (xs_nz[i]) inputs.push_back(*tangents[s.nc + s.nk + i]);
  std::vector<Var> outs =
      b.emit(*eqn.prim, std::move(inputs),
             cf::scan_params(eqn.params, std::move(new_body), static_cast<int64_t>(s.nc + nct),
                             static_cast<int64_t>(s.nk + nkt)));
  JvpFullResult r;
  size_t next_kt = s.nk, next_yt = s.nk + nkt + s.ny;
  for (size_t i = 0; i < s.nk; ++i) {
    r.primal_outs.push_back(outs[i]);
    r.tangent_outs.push_back(carry_nz[i] ? Tangent(outs[next_kt++]) : Tangent());
  }
  for (size_t i = 0; i < s.ny; ++i) {
    r.primal_outs.push_back(outs[s.nk + nkt + i]);
    r.tangent_outs.push_back(ys_nz[i] ? Tangent(outs[next_yt++]) : Tangent());
  }
  return r;
}

// ---- partial eval ------------------------------------------------------------------------------

// Where a residual of the body comes from, seen from outside the loop.
enum class ResKind {
  const_input,  // a known const of the scan: passed to the staged scan as a const
  xs_input,     // a known scanned-over input: its stacked value is passed as it is
  invariant,    // computed from consts only: hoisted out of the loop, computed once
  stacked,      // per-iteration: an extra (stacked) output of the known scan
};

// A split body: `known` maps the known invars to (known outputs..., residuals...); `staged` maps
// (residuals..., the invars marked in `staged_in`...) to (unknown carries..., unknown ys...).
struct BodySplit {
  Jaxpr known, staged;
  std::vector<Var> residuals;
  std::vector<bool> in_uk, out_uk, staged_in;
  std::vector<bool> staged_out;  // the outputs the staged body returns; empty: the unknown ones
};

struct ScanSplit {
  std::vector<Eqn> known_eqns;  // hoisted loop-invariant eqns, then the known scan (if any)
  Eqn staged;
  std::vector<Atom> outputs;  // replaces eqn.outputs[i]
};

// Builds the known scan (with loop-invariant residuals hoisted out and per-iteration ones
// stacked) and the staged scan from a split of the body.
ScanSplit split_scan(const Eqn& eqn, const ScanShape& s, BodySplit split) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  PartialEvalResult pe;
  pe.known = std::move(split.known);
  pe.staged = std::move(split.staged);
  pe.residuals = std::move(split.residuals);
  const std::vector<bool>& in_uk = split.in_uk;
  const std::vector<bool>& out_uk = split.out_uk;
  std::vector<bool> const_uk = slice(in_uk, 0, s.nc), carry_uk = slice(in_uk, s.nc, s.nk),
                    xs_uk = slice(in_uk, s.nc + s.nk, s.nx);

  // Classify the residuals.
  std::unordered_map<Var, size_t, VarHash> invar_index;
  for (size_t i = 0; i < body.invars.size(); ++i) invar_index.emplace(body.invars[i], i);
  std::unordered_set<Var, VarHash> invariant;
  for (size_t i = 0; i < s.nc; ++i)
    if (!const_uk[i]) invariant.insert(body.invars[i]);
  std::vector<bool> eqn_invariant;
  for (const Eqn& e : pe.known.eqns) {
    bool inv = true;
    for (const Atom& a : e.inputs) inv = inv && (a.is_literal() || invariant.count(a.var()));
    eqn_invariant.push_back(inv);
    if (inv)
      for (const Var& o : e.outputs) invariant.insert(o);
  }
  std::vector<ResKind> kinds;
  for (const Var& r : pe.residuals) {
    auto it = invar_index.find(r);
    if (it != invar_index.end() && it->second < s.nc)
      kinds.push_back(ResKind::const_input);
    else if (it != invar_index.end() && it->second >= s.nc + s.nk)
      kinds.push_back(ResKind::xs_input);
    else if (it == invar_index.end() && invariant.count(r))
      kinds.push_back(ResKind::invariant);
    else
      kinds.push_back(ResKind::stacked);
  }

  // Split the known body into the hoisted (loop-invariant) eqns H and the loop L.
  std::vector<Var> known_consts = select(slice(body.invars, 0, s.nc), const_uk, false);
  std::unordered_set<Var, VarHash> read_by_loop;
  std::vector<Eqn> loop_eqns, hoisted_eqns;
  for (size_t i = 0; i < pe.known.eqns.size(); ++i) {
    const Eqn& e = pe.known.eqns[i];
    if (eqn_invariant[i]) {
      hoisted_eqns.push_back(e);
      continue;
    }
    loop_eqns.push_back(e);
    for (const Atom& a : e.inputs)
      if (a.is_var()) read_by_loop.insert(a.var());
  }
  size_t n_known_out = pe.known.outvars.size() - pe.residuals.size();
  std::vector<Atom> loop_outs = slice(pe.known.outvars, 0, n_known_out);
  for (const Atom& a : loop_outs)
    if (a.is_var()) read_by_loop.insert(a.var());
  for (size_t r = 0; r < pe.residuals.size(); ++r)
    if (kinds[r] == ResKind::stacked) {
      loop_outs.push_back(pe.residuals[r]);
      read_by_loop.insert(pe.residuals[r]);
    }
  // The hoisted values: invariant eqn outputs the loop reads, and the invariant residuals.
  std::vector<Var> hoisted_vals;
  std::unordered_set<Var, VarHash> hoisted_seen;
  for (const Eqn& e : hoisted_eqns)
    for (const Var& o : e.outputs)
      if (read_by_loop.count(o) && hoisted_seen.insert(o).second) hoisted_vals.push_back(o);
  for (size_t r = 0; r < pe.residuals.size(); ++r)
    if (kinds[r] == ResKind::invariant && hoisted_seen.insert(pe.residuals[r]).second)
      hoisted_vals.push_back(pe.residuals[r]);

  ScanSplit out;
  JaxprBuilder ob;
  ob.set_source(eqn.source);
  std::vector<Atom> outer_known_consts = select(slice(eqn.inputs, 0, s.nc), const_uk, false);

  // The known loop: (known consts, hoisted values; known carries; known xs) ->
  // (known carries, known ys, stacked residuals).
  Jaxpr loop;
  std::vector<Var> loop_consts = concat(known_consts, hoisted_vals);
  std::vector<Var> loop_carry = select(slice(body.invars, s.nc, s.nk), carry_uk, false);
  std::vector<Var> loop_xs = select(slice(body.invars, s.nc + s.nk, s.nx), xs_uk, false);
  loop.invars = concat(concat(loop_consts, loop_carry), loop_xs);
  loop.eqns = std::move(loop_eqns);
  loop.outvars = std::move(loop_outs);
  DceResult live = dce(loop, std::vector<bool>(loop.outvars.size(), true));
  // Unused consts and xs are dropped (carries must stay: they are outputs too).
  std::vector<bool> keep_in = live.used_inputs;
  for (size_t i = loop_consts.size(); i < loop_consts.size() + loop_carry.size(); ++i)
    keep_in[i] = true;
  loop = std::move(live.jaxpr);
  loop.invars = select(loop.invars, keep_in);
  std::vector<bool> keep_consts = slice(keep_in, 0, loop_consts.size());
  std::vector<bool> keep_xs =
      slice(keep_in, loop_consts.size() + loop_carry.size(), loop_xs.size());
  bool loop_emitted = !loop.outvars.empty();

  // The hoisted eqns, computed once before the loop: those of the values the loop reads and of
  // the invariant residuals.
  std::unordered_set<Var, VarHash> needed;
  for (size_t r = 0; r < pe.residuals.size(); ++r)
    if (kinds[r] == ResKind::invariant) needed.insert(pe.residuals[r]);
  for (size_t i = 0; i < hoisted_vals.size(); ++i)
    if (loop_emitted && keep_consts[known_consts.size() + i]) needed.insert(hoisted_vals[i]);
  std::vector<Var> hoisted_needed;
  for (const Var& v : hoisted_vals)
    if (needed.count(v)) hoisted_needed.push_back(v);
  Jaxpr hoist;
  hoist.invars = known_consts;
  hoist.eqns = std::move(hoisted_eqns);
  hoist.outvars.assign(hoisted_needed.begin(), hoisted_needed.end());
  hoist = dce(hoist);
  std::vector<Atom> hoisted_atoms = inline_jaxpr(ob, hoist, {}, outer_known_consts);
  std::unordered_map<Var, Atom, VarHash> outer_of;  // body var -> outer atom
  for (size_t i = 0; i < hoisted_needed.size(); ++i)
    outer_of.emplace(hoisted_needed[i], hoisted_atoms[i]);
  for (size_t i = 0; i < body.invars.size(); ++i) outer_of.emplace(body.invars[i], eqn.inputs[i]);

  std::vector<Var> known_outs;
  if (loop_emitted) {
    std::vector<Atom> k_in;
    for (const Var& v : select(loop_consts, keep_consts)) k_in.push_back(outer_of.at(v));
    for (const Var& v : loop_carry) k_in.push_back(outer_of.at(v));
    for (const Var& v : select(loop_xs, keep_xs)) k_in.push_back(outer_of.at(v));
    Params kp =
        cf::scan_params(eqn.params, std::move(loop), static_cast<int64_t>(cf::count(keep_consts)),
                        static_cast<int64_t>(loop_carry.size()));
    Eqn known = cf::make_eqn("scan", std::move(k_in), std::move(kp), eqn.source);
    known_outs = known.outputs;
    ob.append(std::move(known));
  }
  out.known_eqns = std::move(ob.eqns());

  // Where each residual comes from outside.
  std::vector<Atom> res_outer;
  size_t next_stacked = n_known_out;
  for (size_t r = 0; r < pe.residuals.size(); ++r) {
    switch (kinds[r]) {
      case ResKind::const_input:
      case ResKind::xs_input:
      case ResKind::invariant:
        res_outer.push_back(outer_of.at(pe.residuals[r]));
        break;
      case ResKind::stacked:
        res_outer.push_back(known_outs[next_stacked++]);
        break;
    }
  }

  // The staged scan: consts (invariant residuals, unknown consts), carries (unknown carries),
  // xs (unknown xs, stacked residuals). Its body reads the residual slices.
  size_t n_res = pe.residuals.size();
  const std::vector<Var>& sv = pe.staged.invars;  // (residuals..., unknown invars...)
  std::vector<Var> st_consts, st_xs_res;
  std::vector<Atom> in_consts, in_xs_res;
  for (size_t r = 0; r < n_res; ++r) {
    bool per_iter = kinds[r] == ResKind::xs_input || kinds[r] == ResKind::stacked;
    (per_iter ? st_xs_res : st_consts).push_back(sv[r]);
    (per_iter ? in_xs_res : in_consts).push_back(res_outer[r]);
  }
  const std::vector<bool>& sin = split.staged_in;
  std::vector<bool> const_in = slice(sin, 0, s.nc), carry_in = slice(sin, s.nc, s.nk),
                    xs_in = slice(sin, s.nc + s.nk, s.nx);
  size_t nsc = cf::count(const_in), nsk = cf::count(carry_in), nsx = cf::count(xs_in);
  Jaxpr staged = pe.staged;
  staged.invars = concat(st_consts, slice(sv, n_res, nsc));
  staged.invars = concat(staged.invars, slice(sv, n_res + nsc, nsk));
  staged.invars = concat(staged.invars, slice(sv, n_res + nsc + nsk, nsx));
  staged.invars = concat(staged.invars, st_xs_res);
  std::vector<Atom> st_in = in_consts;
  for (const Atom& a : select(slice(eqn.inputs, 0, s.nc), const_in)) st_in.push_back(a);
  for (const Atom& a : select(slice(eqn.inputs, s.nc, s.nk), carry_in)) st_in.push_back(a);
  for (const Atom& a : select(slice(eqn.inputs, s.nc + s.nk, s.nx), xs_in)) st_in.push_back(a);
  st_in = concat(st_in, in_xs_res);
  // Consts and xs the staged body does not read are dropped.
  size_t n_st_consts = st_consts.size() + nsc;
  DceResult st_live = dce(staged, std::vector<bool>(staged.outvars.size(), true));
  std::vector<bool> keep = st_live.used_inputs;
  for (size_t i = n_st_consts; i < n_st_consts + nsk; ++i) keep[i] = true;
  staged = std::move(st_live.jaxpr);
  staged.invars = select(staged.invars, keep);
  st_in = select(st_in, keep);
  Params sp = cf::scan_params(eqn.params, std::move(staged),
                              static_cast<int64_t>(cf::count(slice(keep, 0, n_st_consts))),
                              static_cast<int64_t>(nsk));
  out.staged = cf::make_eqn("scan", std::move(st_in), std::move(sp), eqn.source);

  // Output i is the known scan's where known, else the staged scan's (which returns the outputs
  // in `staged_out`).
  const std::vector<bool>& staged_out = split.staged_out.empty() ? out_uk : split.staged_out;
  size_t next_known = 0, next_staged = 0;
  for (size_t i = 0; i < out_uk.size(); ++i) {
    if (out_uk[i])
      out.outputs.push_back(out.staged.outputs[next_staged]);
    else
      out.outputs.push_back(known_outs[next_known++]);
    if (staged_out[i]) ++next_staged;
  }
  return out;
}

PartialEvalRuleResult scan_partial_eval(const Eqn& eqn, const std::vector<bool>& in_unknown) {
  const Jaxpr& body = cf::body_param(eqn, "jaxpr");
  ScanShape s = scan_shape(eqn, body);
  std::vector<bool> const_uk = slice(in_unknown, 0, s.nc), carry_uk = slice(in_unknown, s.nc, s.nk),
                    xs_uk = slice(in_unknown, s.nc + s.nk, s.nx);
  // Fixpoint: a carry is unknown if its initial value or its new value (given the unknown
  // carries) is.
  PartialEvalResult pe = cf::carry_fixpoint(
      carry_uk,
      [&](const std::vector<bool>& carry) {
        return partial_eval(body, concat(concat(const_uk, carry), xs_uk),
                            concat(carry, std::vector<bool>(s.ny, false)));
      },
      [&](const PartialEvalResult& r) { return slice(r.out_unknown, 0, s.nk); });
  BodySplit split;
  split.in_uk = concat(concat(const_uk, carry_uk), xs_uk);
  split.staged_in = split.in_uk;
  split.out_uk = pe.out_unknown;
  split.known = std::move(pe.known);
  split.staged = std::move(pe.staged);
  split.residuals = std::move(pe.residuals);
  ScanSplit sc = split_scan(eqn, s, std::move(split));
  PartialEvalRuleResult out;
  out.known_eqns = std::move(sc.known_eqns);
  out.out_unknown = pe.out_unknown;
  out.outputs = std::move(sc.outputs);
  out.staged_eqn = std::move(sc.staged);
  return out;
}

// partial_eval_jaxpr_custom's rule: the body is split with the same policy, so what the policy
// saves inside the loop is stacked by the known scan and the rest is recomputed by the staged
// one. As in JAX, every input is instantiated on the staged side: known consts and xs are passed
// as they are, and known carries are carried by the staged scan too, from their initial values,
// so that under a policy that saves nothing (a scan inside checkpoint) the staged scan
// recomputes them and the known scan stacks no per-step residual at all.
CustomRuleResult scan_partial_eval_custom(const Eqn& eqn, const std::vector<bool>& unks_in,
                                          const std::vector<bool>& inst_in,
                                          const PolicyRef& policy) {
  const Jaxpr& body = cf::body_param(eqn, "jaxpr");
  ScanShape s = scan_shape(eqn, body);
  std::vector<bool> const_uk = slice(unks_in, 0, s.nc), carry_uk = slice(unks_in, s.nc, s.nk),
                    xs_uk = slice(unks_in, s.nc + s.nk, s.nx);
  CustomPartialEval pe = cf::carry_fixpoint(
      carry_uk,
      [&](const std::vector<bool>& carry) {
        std::vector<bool> inst(s.nc + s.nk + s.nx, true);
        std::vector<bool> ensure_unknown = concat(carry, std::vector<bool>(s.ny, false));
        std::vector<bool> ensure_inst(s.nk + s.ny, true);
        return partial_eval_jaxpr_custom(body, concat(concat(const_uk, carry), xs_uk), inst,
                                         ensure_unknown, ensure_inst, policy);
      },
      [&](const CustomPartialEval& r) { return slice(r.out_unknown, 0, s.nk); });
  BodySplit split;
  split.in_uk = concat(concat(const_uk, carry_uk), xs_uk);
  split.staged_in = std::vector<bool>(s.nc + s.nk + s.nx, true);
  split.out_uk = pe.out_unknown;
  for (size_t i = 0; i < pe.num_residuals; ++i)
    split.residuals.push_back(
        pe.known.outvars[pe.known.outvars.size() - pe.num_residuals + i].var());
  // The staged body returns every output (ensured instantiated), known ones included: later
  // staged eqns read them there instead of saving them.
  split.staged_out = pe.out_inst;
  // The staged jaxpr's residual invars are the known side's residual vars themselves.
  split.known = std::move(pe.known);
  split.staged = std::move(pe.staged);
  ScanSplit sc = split_scan(eqn, s, std::move(split));

  CustomRuleResult r;
  r.unks_out = pe.out_unknown;
  r.inst_out = pe.out_inst;
  r.residuals = cf::staged_residuals(eqn, unks_in, inst_in, sc.known_eqns, sc.staged);
  // Known outputs keep their vars (later eqns read them by name).
  size_t next_k = 0;
  Eqn* known_scan = nullptr;
  for (Eqn& e : sc.known_eqns)
    if (e.prim->name == "scan") known_scan = &e;
  for (size_t i = 0; i < eqn.outputs.size(); ++i) {
    if (pe.out_unknown[i]) continue;
    if (known_scan) known_scan->outputs[next_k++] = eqn.outputs[i];
  }
  // The staged scan binds the same vars (known and staged eqns go to different jaxprs).
  size_t next_s = 0;
  for (size_t i = 0; i < eqn.outputs.size(); ++i)
    if (pe.out_inst[i]) sc.staged.outputs[next_s++] = eqn.outputs[i];
  r.known_eqns = std::move(sc.known_eqns);
  r.staged_eqns.push_back(std::move(sc.staged));
  return r;
}

// ---- transpose ---------------------------------------------------------------------------------

// The scan is linear in its carries and in the consts and xs marked linear; the other consts and
// xs are residuals. The transpose runs the other way: its carries are the cotangents of the
// linear consts (accumulated) and of the carries; its xs are the residual xs and the cotangents
// of the ys; its ys are the cotangents of the linear xs.
std::vector<Cotangent> scan_transpose(const TransposeRuleArgs& a) {
  const Jaxpr& body = cf::body_param(a.eqn, "jaxpr");
  ScanShape s = scan_shape(a.eqn, body);
  JaxprBuilder& b = a.b;
  std::vector<bool> lin;
  for (const TransposeArg& arg : a.args) lin.push_back(arg.linear);
  for (size_t i = s.nc; i < s.nc + s.nk; ++i) lin[i] = true;  // every carry is linear
  std::vector<bool> const_lin = slice(lin, 0, s.nc), xs_lin = slice(lin, s.nc + s.nk, s.nx);
  std::vector<bool> ys_ct;
  for (size_t i = 0; i < s.ny; ++i) ys_ct.push_back(a.cts[s.nk + i].has_value());

  // Keep every carry output and the ys with a cotangent.
  Jaxpr pruned = dce(body, concat(std::vector<bool>(s.nk, true), ys_ct)).jaxpr;
  Jaxpr t = transpose_jaxpr(pruned, lin);
  // t: (res consts..., res xs..., ct carry..., ct ys...) -> (ct lin consts, ct carry, ct lin xs)
  size_t nrc = s.nc - cf::count(const_lin), nrx = s.nx - cf::count(xs_lin);
  size_t nlc = cf::count(const_lin), nyc = cf::count(ys_ct);

  std::vector<Var> res_c, acc, ct_carry, res_x, ct_ys;
  auto fresh = [](const ShapedArray& av) { return Var(ShapedArray(av.dtype, av.shape)); };
  for (size_t i = 0; i < nrc; ++i) res_c.emplace_back(t.invars[i].aval());
  for (size_t i = 0; i < nrx; ++i) res_x.emplace_back(t.invars[nrc + i].aval());
  for (size_t i = 0; i < s.nk; ++i) ct_carry.push_back(fresh(t.invars[nrc + nrx + i].aval()));
  for (size_t i = 0; i < nyc; ++i) ct_ys.push_back(fresh(t.invars[nrc + nrx + s.nk + i].aval()));
  for (size_t i = 0; i < nlc; ++i) acc.push_back(fresh(t.outvars[i].aval()));
  JaxprBuilder wb;
  std::vector<Atom> t_args = concat(std::vector<Atom>(res_c.begin(), res_c.end()),
                                    std::vector<Atom>(res_x.begin(), res_x.end()));
  t_args.insert(t_args.end(), ct_carry.begin(), ct_carry.end());
  t_args.insert(t_args.end(), ct_ys.begin(), ct_ys.end());
  std::vector<Atom> t_outs = inline_jaxpr(wb, t, {}, t_args);
  std::vector<Atom> w_outs;
  for (size_t i = 0; i < nlc; ++i) w_outs.push_back(lax_ops::add_any(wb, acc[i], t_outs[i]));
  for (size_t i = nlc; i < t_outs.size(); ++i) w_outs.push_back(t_outs[i]);
  std::vector<Var> w_in = concat(concat(concat(concat(res_c, acc), ct_carry), res_x), ct_ys);
  Jaxpr w = wb.build(std::move(w_in), std::move(w_outs));

  std::vector<Atom> inputs;
  for (size_t i = 0; i < s.nc; ++i)
    if (!const_lin[i]) inputs.push_back(a.args[i].value);
  for (const Var& v : acc) inputs.push_back(lax_ops::zeros_like_aval(b, v.aval()));
  for (size_t i = 0; i < s.nk; ++i) {
    const Cotangent& c = a.cts[i];
    inputs.push_back(c ? *c : lax_ops::zeros_like_aval(b, ct_carry[i].aval()));
  }
  for (size_t i = 0; i < s.nx; ++i)
    if (!xs_lin[i]) inputs.push_back(a.args[s.nc + s.nk + i].value);
  for (size_t i = 0; i < s.ny; ++i)
    if (a.cts[s.nk + i]) inputs.push_back(*a.cts[s.nk + i]);
  std::vector<Var> outs =
      b.emit(*a.eqn.prim, std::move(inputs),
             cf::scan_params(a.eqn.params, std::move(w), static_cast<int64_t>(nrc),
                             static_cast<int64_t>(nlc + s.nk), !s.reverse));
  std::vector<Cotangent> cts(a.args.size());
  size_t next_c = 0, next_x = nlc + s.nk;
  for (size_t i = 0; i < s.nc; ++i)
    if (const_lin[i]) cts[i] = outs[next_c++];
  for (size_t i = 0; i < s.nk; ++i)
    if (a.args[s.nc + i].linear) cts[s.nc + i] = outs[nlc + i];
  for (size_t i = 0; i < s.nx; ++i)
    if (xs_lin[i]) cts[s.nc + s.nk + i] = outs[next_x++];
  return cts;
}

// ---- dce ---------------------------------------------------------------------------------------

// Bodies with constvars (never built by cjax, possible in parsed text) are kept whole.
std::optional<Eqn> scan_dce(const Eqn& eqn, const std::vector<bool>& used_outputs) {
  if (std::all_of(used_outputs.begin(), used_outputs.end(), [](bool u) { return u; }))
    return std::nullopt;
  const JaxprRef& ref = eqn.params.get_jaxpr("jaxpr");
  if (!ref || !ref->constvars.empty()) return std::nullopt;
  ScanShape s = scan_shape(eqn, *ref);
  std::vector<bool> used_carry = slice(used_outputs, 0, s.nk);
  std::vector<bool> used_ys = slice(used_outputs, s.nk, s.ny);
  // A scan of one step never feeds a new carry back: one nobody reads need not be computed,
  // though its old value may be read (a range's last step recomputed for its residuals, where
  // the next range's input is known: scan_schedules.h). The carry passes through unchanged.
  Jaxpr one_step;
  if (s.length == 1) {
    one_step = *ref;
    for (size_t i = 0; i < s.nk; ++i)
      if (!used_carry[i]) one_step.outvars[i] = one_step.invars[s.nc + i];
  }
  const Jaxpr& body = s.length == 1 ? one_step : *ref;
  // Fixpoint: a carry is needed if its final value is used or the body needs its value to
  // compute something needed.
  DceResult r = cf::carry_fixpoint(
      used_carry, [&](const std::vector<bool>& carry) { return dce(body, concat(carry, used_ys)); },
      [&](const DceResult& d) { return slice(d.used_inputs, s.nc, s.nk); });
  std::vector<bool> keep_in = r.used_inputs;
  for (size_t i = 0; i < s.nk; ++i) keep_in[s.nc + i] = used_carry[i];
  Jaxpr nb = std::move(r.jaxpr);
  nb.invars = select(nb.invars, keep_in);
  Eqn out = eqn;
  out.inputs = select(eqn.inputs, keep_in);
  out.outputs = select(eqn.outputs, concat(used_carry, used_ys));
  out.params = cf::scan_params(eqn.params, std::move(nb),
                               static_cast<int64_t>(cf::count(slice(keep_in, 0, s.nc))),
                               static_cast<int64_t>(cf::count(used_carry)));
  return out;
}

}  // namespace

void register_scan_rules() {
  PassRules& r = define_pass_rules("scan");
  r.jvp_full = scan_jvp;
  r.partial_eval = scan_partial_eval;
  r.transpose = scan_transpose;
  r.partial_eval_custom = scan_partial_eval_custom;
  r.dce = scan_dce;
}

}  // namespace cjax
