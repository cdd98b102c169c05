#include "passes/partial_eval.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/body_memo.h"
#include "passes/dce.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

// The staged half of a jit or scan this pass split, with which of its inputs were known then
// (the residuals). Split again with the same inputs known, such a call has nothing known left:
// every eqn of its body reads an unknown value, and so, by the same argument, do the bodies of
// the calls staged inside it. partial_eval stages it whole instead of splitting it again, which
// transposition (transpose_jaxpr splits its program this way) did at every nesting level, down
// the whole nest: calls nested d deep cost d^2 splits (grad of 99 nested scans took 5.6 s).
BodyMemo<std::vector<bool>>& split_calls() {
  thread_local BodyMemo<std::vector<bool>> calls;
  return calls;
}

bool is_resplit_call(const Eqn& e) {
  return e.prim->name == "jit" || e.prim->name == "scan";
}

}  // namespace

PartialEvalResult partial_eval(const Jaxpr& jaxpr, const std::vector<bool>& in_unknown,
                               const std::vector<bool>& instantiate, bool constants_as_residuals) {
  if (in_unknown.size() != jaxpr.invars.size())
    throw Error(fmt::format("partial_eval: {} flags for {} inputs", in_unknown.size(),
                            jaxpr.invars.size()));
  // Variables by identity (no reference counting on the hot path).
  std::unordered_set<const void*> unknown;
  unknown.reserve(jaxpr.eqns.size() * 2 + jaxpr.invars.size());
  std::unordered_map<const void*, Atom> renamed;  // outputs a rule re-bound
  auto read = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = renamed.find(a.var().id());
    return it == renamed.end() ? a : it->second;
  };
  for (size_t i = 0; i < in_unknown.size(); ++i)
    if (in_unknown[i]) unknown.insert(jaxpr.invars[i].id());
  auto is_unknown = [&](const Atom& a) { return a.is_var() && unknown.count(a.var().id()); };

  Jaxpr known, staged;
  known.constvars = jaxpr.constvars;
  known.consts = jaxpr.consts;
  known.debug = jaxpr.debug;

  // Residuals in first-read order on the staged side (reads by eqns later removed as dead are
  // counted too, as JAX's tracing records them when the eqn is staged).
  std::vector<Var> candidates;
  std::unordered_set<const void*> seen;
  auto note_read = [&](const Atom& a) {
    if (a.is_var() && !unknown.count(a.var().id()) && seen.insert(a.var().id()).second)
      candidates.push_back(a.var());
  };
  // Staged invars standing for constants, with the literal the known side returns for each.
  std::unordered_map<const void*, Literal> constant_of;
  auto stage = [&](Eqn& e) {
    for (Atom& in : e.inputs) {
      if (constants_as_residuals && in.is_literal() && in.literal().array_constant) {
        Var r(in.aval());
        Literal value = in.literal();
        value.array_constant = false;
        constant_of.emplace(r.id(), std::move(value));
        in = r;
      }
      note_read(in);
    }
    for (const Var& o : e.outputs) unknown.insert(o.id());
  };

  for (const Eqn& original : jaxpr.eqns) {
    Eqn eqn = original;
    for (Atom& in : eqn.inputs) in = read(in);
    std::vector<bool> in_unk;
    bool any_unknown = false;
    for (const Atom& in : eqn.inputs) {
      in_unk.push_back(is_unknown(in));
      any_unknown |= in_unk.back();
    }
    if (!any_unknown) {
      known.eqns.push_back(std::move(eqn));
      continue;
    }
    const bool resplit = is_resplit_call(eqn);
    const JaxprRef* body = resplit ? &eqn.params.get_jaxpr("jaxpr") : nullptr;
    const std::vector<bool>* split_as = body && *body ? split_calls().find(*body) : nullptr;
    if (const PartialEvalRule& rule = pass_rules(*eqn.prim).partial_eval;
        rule && !(split_as && *split_as == in_unk)) {
      PartialEvalRuleResult r = rule(eqn, in_unk);
      for (Eqn& k : r.known_eqns) known.eqns.push_back(std::move(k));
      if (r.staged_eqn) {
        if (is_resplit_call(*r.staged_eqn)) {
          std::vector<bool> staged_unknown;
          for (const Atom& in : r.staged_eqn->inputs)
            staged_unknown.push_back(is_unknown(read(in)));
          split_calls().put(r.staged_eqn->params.get_jaxpr("jaxpr"), std::move(staged_unknown));
        }
        stage(*r.staged_eqn);
        staged.eqns.push_back(std::move(*r.staged_eqn));
      }
      for (size_t i = 0; i < eqn.outputs.size(); ++i)
        renamed.emplace(eqn.outputs[i].id(), r.outputs[i]);
      continue;
    }
    stage(eqn);
    staged.eqns.push_back(std::move(eqn));
  }

  PartialEvalResult r;
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    const Atom o = read(jaxpr.outvars[i]);
    bool u = is_unknown(o) || (i < instantiate.size() && instantiate[i]);
    r.out_unknown.push_back(u);
    if (u) {
      note_read(o);
      staged.outvars.push_back(o);
    } else {
      known.outvars.push_back(o);
    }
  }

  // DCE the staged side, then keep the residuals it still reads.
  DceResult live = dce(staged, std::vector<bool>(staged.outvars.size(), true));
  staged = std::move(live.jaxpr);
  std::unordered_set<const void*> staged_reads;
  for (const Eqn& e : staged.eqns)
    for (const Atom& in : e.inputs)
      if (in.is_var()) staged_reads.insert(in.var().id());
  for (const Atom& o : staged.outvars)
    if (o.is_var()) staged_reads.insert(o.var().id());
  for (const Var& c : candidates)
    if (staged_reads.count(c.id())) r.residuals.push_back(c);

  staged.invars = r.residuals;
  for (size_t i = 0; i < in_unknown.size(); ++i)
    if (in_unknown[i]) {
      staged.invars.push_back(jaxpr.invars[i]);
    } else {
      known.invars.push_back(jaxpr.invars[i]);
    }
  for (const Var& res : r.residuals) {
    auto constant = constant_of.find(res.id());
    known.outvars.push_back(constant == constant_of.end() ? Atom(res) : Atom(constant->second));
  }
  r.known = std::move(known);
  r.staged = std::move(staged);
  return r;
}

}  // namespace cjax
