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
#include "passes/jvp.h"
#include "passes/memory/budget_plan.h"
#include "passes/memory/flops.h"
#include "passes/partial_eval.h"
#include "passes/policies.h"
#include "passes/primitive_rules.h"
#include "passes/remat.h"
#include "passes/transpose.h"
#include "passes/util.h"

namespace cjax::memory {
namespace {

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

PlanProblem plan_problem(const Jaxpr& jaxpr, size_t num_consts) {
  // Linearization's jvp (passes/vjp.cc): a tangent for every input with a tangent space.
  const Jaxpr program = checkpoint_jaxpr(jaxpr, nullptr);
  std::vector<bool> differentiable;
  for (size_t i = 0; i < program.invars.size(); ++i)
    differentiable.push_back(i >= num_consts && has_tangent_space(program.invars[i].aval().dtype));
  const JvpJaxpr jvp = jvp_jaxpr(program, differentiable, /*instantiate=*/false);
  std::unordered_map<Var, bool, VarHash> unknown;
  for (size_t i = 0; i < jvp.jaxpr.invars.size(); ++i)
    unknown[jvp.jaxpr.invars[i]] = i >= program.invars.size();
  for (const Eqn& e : jvp.jaxpr.eqns) {
    std::vector<bool> in_unknown;
    for (const Atom& in : e.inputs) {
      auto it = in.is_var() ? unknown.find(in.var()) : unknown.end();
      in_unknown.push_back(it != unknown.end() && it->second);
    }
    if (e.prim->name == "remat2") return {*e.params.get_jaxpr("jaxpr"), std::move(in_unknown)};
    const bool any = std::find(in_unknown.begin(), in_unknown.end(), true) != in_unknown.end();
    for (const Var& o : e.outputs) unknown[o] = any;
  }
  throw Error("memory_budget: the function has nothing to plan");
}

// A nested checkpoint or jit: partial_eval_jaxpr_custom splits its body with the same policy, so
// its body's eqns are decided one by one and the call itself is transparent.
bool is_split_call(const Eqn& e) {
  return splits_body_under_policy(*e.prim) && e.params.find("jaxpr");
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
  // partial evaluation splits it with the save set (remat2's rule names the saved values for an
  // ordinary policy, save_set.h), and transposition transposes the staged remat2. Running the
  // same passes on the same eqns makes the model the model of the real programs, nested
  // checkpoints included.
  auto plan = std::make_shared<MemoryPlan>();
  plan->problem = {body, in_unknown};
  plan->solution.save = save;
  plan->solution.fallback = fallback;
  Jaxpr program;
  for (const Var& v : body.invars) program.invars.emplace_back(v.aval());
  JaxprBuilder b;
  Params params{{"differentiated", false},
                {"policy", PolicyRef(std::make_shared<MemoryBudget>(0, std::move(plan)))},
                {"prevent_cse", true}};
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
          format_byte_size(budget), budget,
          search == Search::exhaustive ? "feasible peak"
          : search == Search::greedy   ? "peak the greedy search found"
                                       : "peak the search over chain schedules found",
          format_byte_size(smallest_peak), smallest_peak)),
      budget(budget),
      smallest_peak(smallest_peak) {}

namespace {

InfeasibleBudget::Search search_of(const SearchInfo& info) {
  return info.exact ? InfeasibleBudget::Search::exhaustive : InfeasibleBudget::Search::greedy;
}

}  // namespace

BudgetSolution solve_memory_budget(const Jaxpr& body, const std::vector<bool>& in_unknown,
                                   size_t budget, bool outer_only) {
  SearchInfo info;
  std::optional<BudgetSolution> s =
      try_solve_memory_budget(body, in_unknown, budget, outer_only, &info);
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

}  // namespace cjax::memory
