#include "passes/memory/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "ir/byte_size.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/builder.h"
#include "passes/dce.h"
#include "passes/memory/chain_schedule.h"
#include "passes/memory/flops.h"
#include "passes/partial_eval.h"
#include "passes/policies.h"
#include "passes/primitive_rules.h"
#include "passes/remat.h"
#include "passes/transpose.h"
#include "passes/util.h"
#include "passes/vjp.h"

namespace cjax::memory {
namespace {

bool is_split_call(const Eqn& e);

// Plays a save set back: it answers for every jaxpr whose eqns it has a decision for (the planned
// body, its nested checkpoints' bodies, and the copies of their eqns that the second split, in
// transposition, sees). The jaxprs inside those that a save set does not cover (the bodies of
// loops and branches) follow the fallback policy: every value saved when there is none, else
// what the fallback (a built-in policy) decides. Any other jaxpr gets no answer.
class PlaybackPolicy : public Policy {
 public:
  std::string repr() const override { return "<function memory_plan at 0xXXXXXXXXXXXX>"; }
  PolicyDecision decide(const Primitive& prim, std::span<const ShapedArray> avals,
                        const Params& params) const override {
    if (fallback_) return policies::decide(fallback_, prim, avals, params);
    return {Saveability::save, {}, {}};
  }
  std::optional<std::vector<PolicyDecision>> plan(
      const Jaxpr& jaxpr, const std::vector<bool>& in_unknown) const override {
    return playback(jaxpr, in_unknown);
  }
  // `save`: one flag per eqn of plan_eqns(body).
  void record(const Jaxpr& body, const std::vector<bool>& save, PolicyRef fallback) const {
    const std::vector<const Eqn*> eqns = plan_eqns(body);
    for (size_t k = 0; k < eqns.size(); ++k) {
      for (const Var& o : eqns[k]->outputs) {
        keep_.push_back(o);  // keeps the id valid
        decided_[o.id()] = save[k];
      }
      for (const auto& [key, value] : eqns[k]->params)
        if (!(key == "jaxpr" && is_split_call(*eqns[k]))) cover(value);
    }
    fallback_ = std::move(fallback);
  }
  std::optional<std::vector<PolicyDecision>> playback(const Jaxpr& jaxpr,
                                                      const std::vector<bool>& in_unknown) const {
    std::vector<PolicyDecision> d(jaxpr.eqns.size());
    for (size_t k = 0; k < d.size(); ++k) {
      const std::vector<Var>& outs = jaxpr.eqns[k].outputs;
      if (outs.empty()) {
        d[k].kind = Saveability::save;
        continue;
      }
      auto it = decided_.find(outs[0].id());
      if (it == decided_.end())
        return covered_.count(outs[0].id()) ? fallback_plan(jaxpr, in_unknown) : std::nullopt;
      d[k].kind = it->second ? Saveability::save : Saveability::recompute;
    }
    return d;
  }

 private:
  // The eqns of the loop and branch bodies in a param (recursively), which the fallback answers.
  void cover(const ParamValue& value) const {
    if (value.is<JaxprRef>() && value.as<JaxprRef>()) {
      for (const Eqn& e : value.as<JaxprRef>()->eqns) {
        for (const Var& o : e.outputs) {
          keep_.push_back(o);
          covered_.insert(o.id());
        }
        for (const auto& [key, inner] : e.params) cover(inner);
      }
    } else if (value.is<ParamTuple>() || value.is<ParamList>()) {
      for (const ParamValue& v :
           value.is<ParamTuple>() ? value.as<ParamTuple>().items : value.as<ParamList>().items)
        cover(v);
    }
  }
  std::optional<std::vector<PolicyDecision>> fallback_plan(
      const Jaxpr& jaxpr, const std::vector<bool>& in_unknown) const {
    if (fallback_) {
      if (auto d = fallback_->plan(jaxpr, in_unknown)) return d;
    }
    std::vector<PolicyDecision> d;
    for (const Eqn& e : jaxpr.eqns)  // the fallback's decisions, not a subclass's decide()
      d.push_back(
          PlaybackPolicy::decide(*e.prim, avals_of(std::span<const Atom>(e.inputs)), e.params));
    return d;
  }

  mutable std::unordered_map<const void*, bool> decided_;  // eqn output -> saved
  mutable std::unordered_set<const void*> covered_;        // eqn outputs the fallback answers
  mutable std::vector<Var> keep_;
  mutable PolicyRef fallback_;
};

// Captures the first jaxpr it is asked to plan.
class ProbePolicy final : public Policy {
 public:
  std::string repr() const override { return "<function memory_probe at 0xXXXXXXXXXXXX>"; }
  PolicyDecision decide(const Primitive&, std::span<const ShapedArray>,
                        const Params&) const override {
    return {Saveability::save, {}, {}};
  }
  std::optional<std::vector<PolicyDecision>> plan(
      const Jaxpr& jaxpr, const std::vector<bool>& in_unknown) const override {
    if (!problem) problem = PlanProblem{jaxpr, in_unknown};
    return std::nullopt;
  }
  mutable std::optional<PlanProblem> problem;
};

bool has_body(const Eqn& e) {
  for (const auto& [key, value] : e.params)
    if (value.is<JaxprRef>() || value.is<ParamTuple>() || value.is<ParamList>()) {
      if (value.is<JaxprRef>()) return true;
      const auto& items =
          value.is<ParamTuple>() ? value.as<ParamTuple>().items : value.as<ParamList>().items;
      for (const ParamValue& v : items)
        if (v.is<JaxprRef>()) return true;
    }
  return false;
}

// A nested checkpoint or jit: partial_eval_jaxpr_custom splits its body with the same policy, so
// its body's eqns are decided one by one and the call itself is transparent.
bool is_split_call(const Eqn& e) {
  return splits_body_under_policy(*e.prim) && e.params.find("jaxpr");
}

void flatten(const Jaxpr& j, std::vector<const Eqn*>& out) {
  for (const Eqn& e : j.eqns) out.push_back(&e);
  for (const Eqn& e : j.eqns)
    if (is_split_call(e)) flatten(*e.params.get_jaxpr("jaxpr"), out);
}

// The dataflow of the planned eqns (plan_eqns order), seen through nested calls: a nested body's
// invars are the call's inputs and the call's outputs are the body's outvars (`canonical`).
// Which eqns are known (all inputs known), the producer of each value, and the known values the
// staged side reads.
struct Analysis {
  std::vector<const Eqn*> eqns;
  std::vector<bool> known, transparent;
  std::unordered_map<const void*, size_t> producer;
  std::unordered_map<const void*, const void*> alias;
  std::vector<double> flops;
  std::vector<size_t> out_bytes;
  std::vector<std::vector<const void*>> reads;  // canonical var inputs, per eqn
  std::vector<const void*> staged_reads;        // known values read by unknown eqns
  // What a save set starts from: save everything, or (outer level only) save the body's own eqns
  // and recompute inside nested checkpoints; `scope` marks the eqns the search may flip.
  std::vector<bool> base, scope;
  const void* canonical(const Atom& x) const {
    if (x.is_literal()) return nullptr;
    auto it = alias.find(x.var().id());
    return it == alias.end() ? x.var().id() : it->second;
  }
};

void walk(const Jaxpr& j, const std::unordered_map<const Eqn*, size_t>& index, Analysis& a,
          std::unordered_map<const void*, bool>& unknown) {
  for (const Eqn& e : j.eqns) {
    const size_t k = index.at(&e);
    if (is_split_call(e)) {
      const Jaxpr& b = *e.params.get_jaxpr("jaxpr");
      for (size_t i = 0; i < b.invars.size() && i < e.inputs.size(); ++i)
        if (const void* c = a.canonical(e.inputs[i])) a.alias[b.invars[i].id()] = c;
      walk(b, index, a, unknown);
      for (size_t i = 0; i < b.outvars.size() && i < e.outputs.size(); ++i)
        if (const void* c = a.canonical(b.outvars[i])) a.alias[e.outputs[i].id()] = c;
      a.transparent[k] = true;
      continue;
    }
    bool any = false;
    for (const Atom& in : e.inputs)
      if (const void* c = a.canonical(in)) {
        a.reads[k].push_back(c);
        auto u = unknown.find(c);
        any = any || (u != unknown.end() && u->second);
      }
    a.known[k] = !any;
    size_t bytes = 0;
    for (const Var& o : e.outputs) {
      unknown[o.id()] = any;
      a.producer[o.id()] = k;
      bytes += o.aval().nbytes();
    }
    a.flops[k] = eqn_flops(e);
    a.out_bytes[k] = bytes;
    if (any)
      for (const void* c : a.reads[k])
        if (auto u = unknown.find(c); u == unknown.end() || !u->second) a.staged_reads.push_back(c);
  }
}

Analysis analyze(const Jaxpr& body, const std::vector<bool>& in_unknown, bool outer_only = false) {
  Analysis a;
  a.eqns = plan_eqns(body);
  const size_t n = a.eqns.size();
  a.known.assign(n, false);
  a.transparent.assign(n, false);
  a.flops.assign(n, 0);
  a.out_bytes.assign(n, 0);
  a.reads.resize(n);
  std::unordered_map<const Eqn*, size_t> index;
  for (size_t k = 0; k < n; ++k) index[a.eqns[k]] = k;
  std::unordered_map<const void*, bool> unknown;
  for (size_t i = 0; i < body.invars.size(); ++i) unknown[body.invars[i].id()] = in_unknown[i];
  walk(body, index, a, unknown);
  a.base.assign(n, true);
  a.scope.assign(n, true);
  if (outer_only) {
    // The body's eqns, and the producers of what its nested checkpoints return (a chain
    // schedule's snapshots).
    for (size_t k = body.eqns.size(); k < n; ++k) a.base[k] = a.scope[k] = false;
    for (const Eqn& e : body.eqns)
      if (is_split_call(e))
        for (const Var& o : e.outputs)
          if (auto p = a.producer.find(a.canonical(o)); p != a.producer.end())
            a.base[p->second] = a.scope[p->second] = true;
  }
  return a;
}

// The recompute set (and its FLOPs and residual bytes) a save set gives: what partial eval and
// DCE keep on the backward side.
struct Closure {
  std::vector<bool> recomputed;
  double flops = 0;
  size_t residual_bytes = 0;
};

Closure closure(const Analysis& a, const std::vector<bool>& save) {
  Closure c;
  c.recomputed.assign(a.eqns.size(), false);
  std::unordered_map<const void*, bool> seen;
  std::vector<const void*> work = a.staged_reads;
  while (!work.empty()) {
    const void* v = work.back();
    work.pop_back();
    if (!seen.emplace(v, true).second) continue;
    auto p = a.producer.find(v);
    if (p == a.producer.end()) continue;  // an input: the caller's buffer
    const size_t k = p->second;
    if (!a.known[k]) continue;
    if (save[k] || has_body(*a.eqns[k])) {
      for (const Var& o : a.eqns[k]->outputs)
        if (o.id() == v) c.residual_bytes += o.aval().nbytes();
      continue;
    }
    if (!c.recomputed[k]) {
      c.recomputed[k] = true;
      c.flops += a.flops[k];
      for (const void* in : a.reads[k]) work.push_back(in);
    }
  }
  return c;
}

// The eqns whose save/recompute choice changes the programs, within the analysis' scope.
std::vector<size_t> candidates_of(const Analysis& a) {
  std::vector<bool> none(a.eqns.size(), false);
  for (size_t k = 0; k < none.size(); ++k) none[k] = a.base[k] && !a.scope[k];
  Closure c = closure(a, none);
  std::vector<size_t> cand;
  for (size_t k = 0; k < a.eqns.size(); ++k)
    if (a.scope[k] && c.recomputed[k] && a.out_bytes[k] > 0) cand.push_back(k);
  return cand;
}

std::vector<bool> all_saved(const Analysis& a) {
  return a.base;
}

std::vector<bool> recompute_key(const Closure& c, const std::vector<size_t>& cand) {
  std::vector<bool> key;
  for (size_t k : cand) key.push_back(c.recomputed[k]);
  return key;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Every distinct recompute set of the candidates, costed: for the exhaustive search and the
// frontier. `stop_at_budget`: stop at the first (fewest FLOPs) that fits.
struct Costed {
  std::vector<bool> save;
  StepModel model;
  PolicyRef fallback;  // for the loop and branch bodies the save set does not cover
};

std::vector<Costed> enumerate(const Jaxpr& body, const std::vector<bool>& in_unknown,
                              const Analysis& a, const std::vector<size_t>& cand,
                              std::optional<size_t> stop_at_budget, size_t* evaluations) {
  const size_t n = cand.size();
  struct Entry {
    std::vector<bool> save;
    double flops;
    size_t recomputed;
  };
  std::map<std::vector<bool>, Entry> distinct;
  for (uint64_t mask = 0; mask < (uint64_t{1} << n); ++mask) {
    std::vector<bool> save = all_saved(a);
    for (size_t i = 0; i < n; ++i) save[cand[i]] = (mask >> i) & 1;
    Closure c = closure(a, save);
    std::vector<bool> key = recompute_key(c, cand);
    size_t count = static_cast<size_t>(std::count(key.begin(), key.end(), true));
    distinct.emplace(std::move(key), Entry{std::move(save), c.flops, count});
  }
  std::vector<Entry> order;
  for (auto& [key, e] : distinct) order.push_back(std::move(e));
  std::stable_sort(order.begin(), order.end(), [](const Entry& x, const Entry& y) {
    return x.flops != y.flops ? x.flops < y.flops : x.recomputed < y.recomputed;
  });
  // Without nested calls the closure's FLOPs are the backward program's recomputed FLOPs, so the
  // first set that fits is the cheapest. With nested checkpoints the backward program recomputes
  // more (their transposition recomputes their bodies again), so the closure's FLOPs only bound
  // it from below: the search goes on until that bound reaches the cheapest fit found. (Were the
  // bound ever broken, every set is costed.)
  const bool ordered_exactly =
      std::none_of(a.transparent.begin(), a.transparent.end(), [](bool t) { return t; });
  std::vector<Costed> out;
  std::optional<double> cheapest_fit;
  bool bound_holds = true;
  for (Entry& e : order) {
    if (cheapest_fit && bound_holds && e.flops >= *cheapest_fit) break;
    StepModel m = evaluate_plan(body, in_unknown, e.save).model;
    ++*evaluations;
    bound_holds = bound_holds && m.recompute_flops >= e.flops;
    const bool fits = stop_at_budget && m.peak_bytes <= *stop_at_budget;
    if (fits) cheapest_fit = std::min(cheapest_fit.value_or(m.recompute_flops), m.recompute_flops);
    out.push_back({std::move(e.save), std::move(m), nullptr});
    if (fits && ordered_exactly) break;
  }
  return out;
}

// The greedy knapsack: from saving everything, stop saving one value at a time, the one whose
// recomputation buys the most peak bytes per recomputed FLOP (costed exactly with the model up to
// kGreedyExactCandidates candidates, beyond that by the residual bytes it frees). Returns every
// step's choice, costed.
std::vector<Costed> greedy(const Jaxpr& body, const std::vector<bool>& in_unknown,
                           const Analysis& a, const std::vector<size_t>& cand,
                           std::optional<size_t> stop_at_budget, size_t* evaluations) {
  constexpr size_t kGreedyExactCandidates = 40;
  std::vector<Costed> out;
  std::vector<bool> save = all_saved(a);
  auto cost = [&](const std::vector<bool>& s) {
    ++*evaluations;
    return evaluate_plan(body, in_unknown, s).model;
  };
  StepModel m = cost(save);
  while (true) {
    const bool fits = stop_at_budget && m.peak_bytes <= *stop_at_budget;
    out.push_back({save, m, nullptr});
    if (fits) return out;
    const Closure now = closure(a, save);
    double best = 0;
    size_t pick = 0;
    std::optional<StepModel> picked;
    for (size_t k : cand) {
      if (!save[k]) continue;
      save[k] = false;
      Closure c = closure(a, save);
      if (cand.size() <= kGreedyExactCandidates) {
        StepModel t = cost(save);
        if (t.peak_bytes < m.peak_bytes) {
          const double gain = static_cast<double>(m.peak_bytes - t.peak_bytes) /
                              (1.0 + std::max(0.0, t.recompute_flops - m.recompute_flops));
          if (gain > best) best = gain, pick = k, picked = t;
        }
      } else if (c.residual_bytes < now.residual_bytes) {
        const double gain = static_cast<double>(now.residual_bytes - c.residual_bytes) /
                            (1.0 + std::max(0.0, c.flops - now.flops));
        if (gain > best) best = gain, pick = k;
      }
      save[k] = true;
    }
    if (best <= 0) break;
    save[pick] = false;
    m = picked ? *picked : cost(save);
  }
  return out;
}

// The built-in policies, each as a whole: its choices for the planned eqns, and for the loop and
// branch bodies, which no save set covers, too. They are corners of the curve the searches may
// miss (saving nothing is the last resort), so the smallest peak found is at most each of
// theirs.
std::vector<Costed> builtin_seeds(const Jaxpr& body, const std::vector<bool>& in_unknown,
                                  const Analysis& a, const std::vector<size_t>& cand,
                                  size_t* evaluations) {
  std::vector<Costed> out;
  for (const PolicyRef& builtin : {policies::nothing_saveable(), policies::dots_saveable(),
                                   policies::dots_with_no_batch_dims_saveable()}) {
    // Every planned eqn as the policy decides it, loops and calls too (which the searches keep
    // as residuals: their recomputation is not modelled by the closure).
    std::vector<bool> s(a.eqns.size());
    for (size_t k = 0; k < s.size(); ++k) {
      const Eqn& e = *a.eqns[k];
      std::vector<ShapedArray> avals = avals_of(std::span<const Atom>(e.inputs));
      s[k] = policies::decide(builtin, *e.prim, avals, e.params).kind == Saveability::save;
    }
    ++*evaluations;
    StepModel m = evaluate_plan(body, in_unknown, s, builtin).model;
    out.push_back({std::move(s), std::move(m), builtin});
  }
  return out;
}

}  // namespace

PlanProblem plan_problem(const Jaxpr& jaxpr) {
  auto probe = std::make_shared<ProbePolicy>();
  vjp_jaxpr(checkpoint_jaxpr(jaxpr, probe));
  if (!probe->problem) throw Error("memory_budget: the function has nothing to plan");
  return *probe->problem;
}

std::vector<size_t> plan_candidates(const Jaxpr& body, const std::vector<bool>& in_unknown) {
  return candidates_of(analyze(body, in_unknown));
}

std::vector<const Eqn*> plan_eqns(const Jaxpr& body) {
  std::vector<const Eqn*> out;
  flatten(body, out);
  return out;
}

PlanCost evaluate_plan(const Jaxpr& body, const std::vector<bool>& in_unknown,
                       const std::vector<bool>& save, const PolicyRef& fallback) {
  if (save.size() != plan_eqns(body).size())
    throw Error(fmt::format("evaluate_plan: {} save flags for {} planned eqns", save.size(),
                            plan_eqns(body).size()));
  // The programs vjp builds: the linearized function is one remat2 eqn whose body is `body`;
  // partial evaluation splits it with the save set (remat2's rule), and transposition splits the
  // staged remat2 again. Running the same passes on the same eqns (the copy keeps the var
  // identities the policy plays back) makes the model the model of the real programs, nested
  // checkpoints included.
  auto policy = std::make_shared<PlaybackPolicy>();
  policy->record(body, save, fallback);
  Jaxpr program;
  for (const Var& v : body.invars) program.invars.emplace_back(v.aval());
  JaxprBuilder b;
  Params params{
      {"differentiated", false}, {"policy", ParamValue(PolicyRef(policy))}, {"prevent_cse", true}};
  std::vector<Var> outs =
      b.emit("remat2", std::vector<Atom>(program.invars.begin(), program.invars.end()),
             with_jaxpr(params, body));
  program = b.build(program.invars, std::vector<Atom>(outs.begin(), outs.end()));
  PartialEvalResult pe =
      partial_eval(program, in_unknown, std::vector<bool>(program.outvars.size(), false));
  std::vector<bool> linear(pe.residuals.size(), false);
  linear.resize(pe.staged.invars.size(), true);
  PlanCost r;
  r.fwd = std::move(pe.known);
  r.bwd = transpose_jaxpr(pe.staged, linear);
  r.model = model_step(r.fwd, r.bwd, pe.residuals.size());
  return r;
}

std::optional<BudgetSolution> try_solve_memory_budget(const Jaxpr& body,
                                                      const std::vector<bool>& in_unknown,
                                                      size_t budget, bool outer_only,
                                                      SearchInfo* info, double flops_to_beat) {
  const auto t0 = std::chrono::steady_clock::now();
  const Analysis a = analyze(body, in_unknown, outer_only);
  const std::vector<size_t> cand = candidates_of(a);
  BudgetSolution s;
  s.candidates = cand.size();
  // A chain schedule's outer level is searched exhaustively only when small: its closure bounds
  // the recomputation loosely (the nested levels recompute more), so the search costs most sets.
  s.exact = cand.size() <= (outer_only ? kExactOuterCandidates : kExactCandidates);
  if (outer_only) {
    // A chain schedule's outer level is bracketed first. Saving nothing there gives its smallest
    // residuals: when that does not fit, the schedule is dropped without a search (saving more
    // rarely lowers the peak, and the search would cost every set). Saving all of it (the
    // snapshots of the first sweep) recomputes the least: when that fits it is the answer, and
    // when it does not beat `flops_to_beat` no choice of this schedule does.
    std::vector<bool> nothing = all_saved(a);
    for (size_t k : cand) nothing[k] = false;
    StepModel low = evaluate_plan(body, in_unknown, nothing).model;
    ++s.evaluations;
    if (low.peak_bytes > budget) {
      if (info) *info = {low.peak_bytes, false, false};
      return std::nullopt;
    }
    StepModel cheap = evaluate_plan(body, in_unknown, all_saved(a)).model;
    ++s.evaluations;
    const size_t smallest = std::min(low.peak_bytes, cheap.peak_bytes);
    if (cheap.recompute_flops >= flops_to_beat) {
      if (info) *info = {smallest, false, true};
      return std::nullopt;
    }
    if (cheap.peak_bytes <= budget) {
      s.save = all_saved(a);
      s.model = std::move(cheap);
      s.exact = true;
      s.solve_ms = ms_since(t0);
      if (info) *info = {smallest, true, false};
      return s;
    }
  }
  std::vector<Costed> tried = s.exact ? enumerate(body, in_unknown, a, cand, budget, &s.evaluations)
                                      : greedy(body, in_unknown, a, cand, budget, &s.evaluations);
  if (!outer_only)
    for (Costed& c : builtin_seeds(body, in_unknown, a, cand, &s.evaluations))
      tried.push_back(std::move(c));
  s.solve_ms = ms_since(t0);
  // The cheapest choice that fits (the exhaustive search stops at it; the greedy one's are not
  // ordered by FLOPs).
  const Costed* best = nullptr;
  size_t smallest = std::numeric_limits<size_t>::max();
  for (const Costed& c : tried) {
    smallest = std::min(smallest, c.model.peak_bytes);
    if (c.model.peak_bytes <= budget &&
        (!best || c.model.recompute_flops < best->model.recompute_flops))
      best = &c;
  }
  if (info) *info = {smallest, s.exact, false};
  if (!best) return std::nullopt;
  s.save = best->save;
  s.model = best->model;
  s.fallback = best->fallback;
  return s;
}

InfeasibleBudget::InfeasibleBudget(size_t budget, size_t smallest_peak, Search search)
    : cjax::Error(fmt::format(
          "memory_budget: no save set fits a peak of {} ({} bytes); the smallest {} is {} ({} "
          "bytes)",
          format_bytes(budget), budget,
          search == Search::exhaustive ? "feasible peak"
          : search == Search::greedy   ? "peak the greedy search found"
                                       : "peak the search over chain schedules found",
          format_bytes(smallest_peak), smallest_peak)),
      budget(budget),
      smallest_peak(smallest_peak) {}

namespace {

InfeasibleBudget::Search search_of(const SearchInfo& info) {
  return info.exact ? InfeasibleBudget::Search::exhaustive : InfeasibleBudget::Search::greedy;
}

}  // namespace

BudgetSolution solve_memory_budget(const Jaxpr& body, const std::vector<bool>& in_unknown,
                                   size_t budget) {
  SearchInfo info;
  std::optional<BudgetSolution> s = try_solve_memory_budget(body, in_unknown, budget, false, &info);
  if (!s) throw InfeasibleBudget(budget, info.smallest_peak, search_of(info));
  return std::move(*s);
}

std::vector<BudgetSolution> pareto_frontier(const Jaxpr& body,
                                            const std::vector<bool>& in_unknown) {
  const Analysis a = analyze(body, in_unknown);
  const std::vector<size_t> cand = plan_candidates(body, in_unknown);
  const bool exact = cand.size() <= kExactCandidates;
  size_t evaluations = 0;
  std::vector<Costed> all = exact ? enumerate(body, in_unknown, a, cand, std::nullopt, &evaluations)
                                  : greedy(body, in_unknown, a, cand, 0, &evaluations);
  for (Costed& c : builtin_seeds(body, in_unknown, a, cand, &evaluations))
    all.push_back(std::move(c));
  std::stable_sort(all.begin(), all.end(), [](const Costed& x, const Costed& y) {
    return x.model.peak_bytes != y.model.peak_bytes
               ? x.model.peak_bytes < y.model.peak_bytes
               : x.model.recompute_flops < y.model.recompute_flops;
  });
  std::vector<BudgetSolution> front;
  double best_flops = std::numeric_limits<double>::infinity();
  for (Costed& c : all) {
    if (c.model.recompute_flops >= best_flops) continue;
    best_flops = c.model.recompute_flops;
    BudgetSolution s;
    s.save = std::move(c.save);
    s.model = std::move(c.model);
    s.fallback = std::move(c.fallback);
    s.exact = exact;
    s.candidates = cand.size();
    s.evaluations = evaluations;
    front.push_back(std::move(s));
  }
  return front;
}

namespace {

// The same planned eqns, primitive for primitive (the jvp of one body, traced twice).
bool same_structure(const Jaxpr& a, const Jaxpr& b) {
  const std::vector<const Eqn*> x = plan_eqns(a), y = plan_eqns(b);
  if (x.size() != y.size() || a.invars.size() != b.invars.size()) return false;
  for (size_t k = 0; k < x.size(); ++k) {
    if (x[k]->prim != y[k]->prim || x[k]->inputs.size() != y[k]->inputs.size() ||
        x[k]->outputs.size() != y[k]->outputs.size())
      return false;
    for (size_t o = 0; o < x[k]->outputs.size(); ++o)
      if (!x[k]->outputs[o].aval().same_type(y[k]->outputs[o].aval())) return false;
  }
  return true;
}

class BudgetPolicy final : public PlaybackPolicy {
 public:
  explicit BudgetPolicy(size_t bytes) : bytes_(bytes) {}
  std::string repr() const override { return "<function memory_budget at 0xXXXXXXXXXXXX>"; }
  PolicyDecision decide(const Primitive& prim, std::span<const ShapedArray>,
                        const Params&) const override {
    throw UsageError(fmt::format(
        "memory_budget decides per value and cannot answer for a lone '{}' eqn: use it as "
        "checkpoint's policy, not inside save_from_both_policies",
        prim.name));
  }
  std::optional<std::vector<PolicyDecision>> plan(
      const Jaxpr& jaxpr, const std::vector<bool>& in_unknown) const override {
    // The solver decides for the body and the bodies of its nested checkpoints at once; the
    // nested bodies, and the backward side of each split (linearize and transpose split the
    // staged remat2 again), are answered with those decisions rather than planned afresh. A
    // jaxpr it has not decided (a loop's body) is planned on its own.
    if (jaxpr.eqns.empty()) return std::vector<PolicyDecision>{};
    if (auto d = playback(jaxpr, in_unknown)) return d;
    if (pending_ && same_structure(pending_->first, jaxpr)) {
      // The chain schedule restructure() picked: its problem was solved there already.
      last_ = std::move(pending_->second);
      pending_.reset();
      record(jaxpr, last_->save, last_->fallback);
      return playback(jaxpr, in_unknown);
    }
    SearchInfo info;
    last_ = try_solve_memory_budget(jaxpr, in_unknown, bytes_, chain_slots_ > 0, &info);
    if (!last_) throw InfeasibleBudget(bytes_, info.smallest_peak, search_of(info));
    record(jaxpr, last_->save, last_->fallback);
    return playback(jaxpr, in_unknown);
  }
  // A chain of equal layers is nested as checkpoints when a binomial schedule recomputes less
  // under the budget than any save set of the body as written (chain_schedule.h).
  JaxprRef restructure(const Jaxpr& body) const override {
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<Chain> chain = find_chain(body);
    if (!chain) return nullptr;
    const std::vector<ChainSchedule> schedules = chain_schedules(body, *chain, bytes_);
    const ChainSchedule& pick = pick_chain_schedule(schedules, bytes_);
    chain_slots_ = pick.slots;
    pending_.emplace(pick.problem.body, *pick.solution);
    pending_->second.solve_ms = ms_since(t0);  // every schedule's search
    if (pick.slots == 0) return nullptr;
    return std::make_shared<const Jaxpr>(pick.body);
  }
  const BudgetSolution* last() const { return last_ ? &*last_ : nullptr; }
  size_t chain_slots() const { return chain_slots_; }

 private:
  size_t bytes_;
  mutable size_t chain_slots_ = 0;
  mutable std::optional<std::pair<Jaxpr, BudgetSolution>> pending_;
  mutable std::optional<BudgetSolution> last_;
};

}  // namespace

const BudgetSolution* last_solution(const PolicyRef& policy) {
  const auto* p = dynamic_cast<const BudgetPolicy*>(policy.get());
  return p ? p->last() : nullptr;
}

size_t last_chain_slots(const PolicyRef& policy) {
  const auto* p = dynamic_cast<const BudgetPolicy*>(policy.get());
  return p ? p->chain_slots() : 0;
}

size_t parse_bytes(const std::string& text) {
  if (std::optional<size_t> bytes = parse_byte_size(text)) return *bytes;
  throw UsageError(fmt::format(
      "'{}' is not a size: write bytes or a number with B, KiB, MiB, GiB, kB, MB or GB", text));
}

std::string format_bytes(size_t n) {
  return format_byte_size(n);
}

}  // namespace cjax::memory

namespace cjax::policies {

PolicyRef memory_budget(size_t bytes) {
  return std::make_shared<memory::BudgetPolicy>(bytes);
}

}  // namespace cjax::policies
