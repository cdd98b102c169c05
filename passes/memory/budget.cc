#include "passes/memory/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/dce.h"
#include "passes/memory/flops.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/transpose.h"
#include "passes/util.h"
#include "passes/vjp.h"

namespace cjax::memory {
namespace {

// Decides for one jaxpr from a fixed save set; any other jaxpr it is asked about (a nested
// checkpoint's or a loop's body) saves everything.
class FixedPlan final : public Policy {
 public:
  FixedPlan(const Jaxpr* body, std::vector<bool> save) : body_(body), save_(std::move(save)) {}
  std::string repr() const override { return "<function memory_plan at 0xXXXXXXXXXXXX>"; }
  PolicyDecision decide(const Primitive&, std::span<const ShapedArray>,
                        const Params&) const override {
    return {Saveability::save, {}, {}};
  }
  std::optional<std::vector<PolicyDecision>> plan(const Jaxpr& jaxpr,
                                                  const std::vector<bool>&) const override {
    if (&jaxpr != body_) return std::nullopt;
    std::vector<PolicyDecision> d(save_.size());
    for (size_t k = 0; k < save_.size(); ++k)
      d[k].kind = save_[k] ? Saveability::save : Saveability::recompute;
    return d;
  }

 private:
  const Jaxpr* body_;
  std::vector<bool> save_;
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

// Which eqns are known (all inputs known), and the producer of each var.
struct Analysis {
  std::vector<bool> known;
  std::unordered_map<const void*, size_t> producer;
  std::vector<double> flops;
  std::vector<size_t> out_bytes;
  std::vector<const void*> staged_reads;  // known vars read by unknown eqns
};

Analysis analyze(const Jaxpr& body, const std::vector<bool>& in_unknown) {
  Analysis a;
  std::unordered_map<const void*, bool> unknown;
  for (size_t i = 0; i < body.invars.size(); ++i) unknown[body.invars[i].id()] = in_unknown[i];
  a.known.resize(body.eqns.size());
  for (size_t k = 0; k < body.eqns.size(); ++k) {
    const Eqn& e = body.eqns[k];
    bool any = false;
    for (const Atom& in : e.inputs)
      if (in.is_var() && unknown[in.var().id()]) any = true;
    a.known[k] = !any;
    size_t bytes = 0;
    for (const Var& o : e.outputs) {
      unknown[o.id()] = any;
      a.producer[o.id()] = k;
      bytes += o.aval().nbytes();
    }
    a.flops.push_back(eqn_flops(e));
    a.out_bytes.push_back(bytes);
    if (any)
      for (const Atom& in : e.inputs)
        if (in.is_var() && !unknown[in.var().id()]) a.staged_reads.push_back(in.var().id());
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

Closure closure(const Jaxpr& body, const Analysis& a, const std::vector<bool>& save) {
  Closure c;
  c.recomputed.assign(body.eqns.size(), false);
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
    if (save[k] || has_body(body.eqns[k])) {
      for (const Var& o : body.eqns[k].outputs)
        if (o.id() == v) c.residual_bytes += o.aval().nbytes();
      continue;
    }
    if (!c.recomputed[k]) {
      c.recomputed[k] = true;
      c.flops += a.flops[k];
      for (const Atom& in : body.eqns[k].inputs)
        if (in.is_var()) work.push_back(in.var().id());
    }
  }
  return c;
}

std::vector<bool> all_saved(const Jaxpr& body) {
  return std::vector<bool>(body.eqns.size(), true);
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
    std::vector<bool> save = all_saved(body);
    for (size_t i = 0; i < n; ++i) save[cand[i]] = (mask >> i) & 1;
    Closure c = closure(body, a, save);
    std::vector<bool> key = recompute_key(c, cand);
    size_t count = static_cast<size_t>(std::count(key.begin(), key.end(), true));
    distinct.emplace(std::move(key), Entry{std::move(save), c.flops, count});
  }
  std::vector<Entry> order;
  for (auto& [key, e] : distinct) order.push_back(std::move(e));
  std::stable_sort(order.begin(), order.end(), [](const Entry& x, const Entry& y) {
    return x.flops != y.flops ? x.flops < y.flops : x.recomputed < y.recomputed;
  });
  std::vector<Costed> out;
  for (Entry& e : order) {
    StepModel m = evaluate_plan(body, in_unknown, e.save).model;
    ++*evaluations;
    const bool fits = stop_at_budget && m.peak_bytes <= *stop_at_budget;
    out.push_back({std::move(e.save), std::move(m)});
    if (fits) break;
  }
  return out;
}

// The greedy knapsack: from saving everything, stop saving one value at a time, the one whose
// recomputation buys the most peak bytes per recomputed FLOP (costed exactly with the model up to
// kGreedyExactCandidates candidates, beyond that by the residual bytes it frees). Returns every
// step's choice, costed, and the choices of the built-in policies.
std::vector<Costed> greedy(const Jaxpr& body, const std::vector<bool>& in_unknown,
                           const Analysis& a, const std::vector<size_t>& cand,
                           std::optional<size_t> stop_at_budget, size_t* evaluations) {
  constexpr size_t kGreedyExactCandidates = 40;
  std::vector<Costed> out;
  std::vector<bool> save = all_saved(body);
  auto cost = [&](const std::vector<bool>& s) {
    ++*evaluations;
    return evaluate_plan(body, in_unknown, s).model;
  };
  StepModel m = cost(save);
  while (true) {
    const bool fits = stop_at_budget && m.peak_bytes <= *stop_at_budget;
    out.push_back({save, m});
    if (fits) return out;
    const Closure now = closure(body, a, save);
    double best = 0;
    size_t pick = 0;
    std::optional<StepModel> picked;
    for (size_t k : cand) {
      if (!save[k]) continue;
      save[k] = false;
      Closure c = closure(body, a, save);
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
  // The built-in policies' choices join in: they are other corners of the curve the greedy walk
  // may pass by (saving nothing is the last resort).
  for (const PolicyRef& builtin : {policies::nothing_saveable(), policies::dots_saveable(),
                                   policies::dots_with_no_batch_dims_saveable()}) {
    std::vector<bool> s = all_saved(body);
    for (size_t k : cand) {
      const Eqn& e = body.eqns[k];
      std::vector<ShapedArray> avals = avals_of(std::span<const Atom>(e.inputs));
      s[k] = policies::decide(builtin, *e.prim, avals, e.params).kind == Saveability::save;
    }
    out.push_back({s, cost(s)});
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
  Analysis a = analyze(body, in_unknown);
  Closure c = closure(body, a, std::vector<bool>(body.eqns.size(), false));
  std::vector<size_t> cand;
  for (size_t k = 0; k < body.eqns.size(); ++k)
    if (c.recomputed[k] && a.out_bytes[k] > 0) cand.push_back(k);
  return cand;
}

PlanCost evaluate_plan(const Jaxpr& body, const std::vector<bool>& in_unknown,
                       const std::vector<bool>& save) {
  const size_t n_in = body.invars.size(), n_out = body.outvars.size();
  auto policy = std::make_shared<FixedPlan>(&body, save);
  std::vector<bool> all(n_in, true), none(n_out, false);
  CustomPartialEval pe = partial_eval_jaxpr_custom(body, in_unknown, all, none, none, policy);

  DceResult staged = dce(pe.staged, select(pe.out_unknown, pe.out_inst));
  std::vector<bool> used_res(staged.used_inputs.begin(),
                             staged.used_inputs.begin() + static_cast<ptrdiff_t>(pe.num_residuals));
  // The staged side's inputs: the residuals, then every input of the body (instantiated); the
  // known ones among those are non-linear too, and the forward program hands them over.
  std::vector<bool> linear(pe.num_residuals, false);
  linear.insert(linear.end(), in_unknown.begin(), in_unknown.end());
  std::vector<Var> handed_over;
  for (size_t i = 0; i < n_in; ++i)
    if (!in_unknown[i] && staged.used_inputs[pe.num_residuals + i])
      handed_over.push_back(body.invars[i]);
  linear = select(linear, staged.used_inputs);
  staged.jaxpr.invars = select(staged.jaxpr.invars, staged.used_inputs);
  const size_t n_known_out = pe.known.outvars.size() - pe.num_residuals;
  std::vector<bool> known_keep(n_known_out, true);
  known_keep.insert(known_keep.end(), used_res.begin(), used_res.end());
  Jaxpr known = dce(pe.known, known_keep).jaxpr;
  size_t num_res = static_cast<size_t>(std::count(used_res.begin(), used_res.end(), true));
  known = insert_reduce_precision(known, num_res);
  known.outvars.insert(known.outvars.end(), handed_over.begin(), handed_over.end());
  num_res += handed_over.size();

  PlanCost r;
  r.fwd = std::move(known);
  r.bwd = transpose_jaxpr(staged.jaxpr, linear);
  r.model = model_step(r.fwd, r.bwd, num_res);
  return r;
}

BudgetSolution solve_memory_budget(const Jaxpr& body, const std::vector<bool>& in_unknown,
                                   size_t budget) {
  const auto t0 = std::chrono::steady_clock::now();
  const Analysis a = analyze(body, in_unknown);
  const std::vector<size_t> cand = plan_candidates(body, in_unknown);
  BudgetSolution s;
  s.candidates = cand.size();
  s.exact = cand.size() <= kExactCandidates;
  std::vector<Costed> tried = s.exact ? enumerate(body, in_unknown, a, cand, budget, &s.evaluations)
                                      : greedy(body, in_unknown, a, cand, budget, &s.evaluations);
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
  if (!best)
    throw Error(fmt::format(
        "memory_budget: no save set fits a peak of {} ({} bytes); the smallest {} is {} ({} "
        "bytes)",
        format_bytes(budget), budget, s.exact ? "feasible peak" : "peak the greedy search found",
        format_bytes(smallest), smallest));
  s.save = best->save;
  s.model = best->model;
  return s;
}

std::vector<BudgetSolution> pareto_frontier(const Jaxpr& body,
                                            const std::vector<bool>& in_unknown) {
  const Analysis a = analyze(body, in_unknown);
  const std::vector<size_t> cand = plan_candidates(body, in_unknown);
  const bool exact = cand.size() <= kExactCandidates;
  size_t evaluations = 0;
  std::vector<Costed> all = exact ? enumerate(body, in_unknown, a, cand, std::nullopt, &evaluations)
                                  : greedy(body, in_unknown, a, cand, 0, &evaluations);
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
    s.exact = exact;
    s.candidates = cand.size();
    s.evaluations = evaluations;
    front.push_back(std::move(s));
  }
  return front;
}

namespace {

class BudgetPolicy final : public Policy {
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
    // The backward side of a split is split again (linearize and transpose partial-evaluate the
    // staged remat2): its eqns are the ones this policy chose to recompute, and they keep that
    // decision rather than being planned afresh.
    std::vector<PolicyDecision> d(jaxpr.eqns.size());
    bool seen_all = true;
    for (size_t k = 0; k < d.size(); ++k) {
      const std::vector<Var>& outs = jaxpr.eqns[k].outputs;
      auto it = outs.empty() ? decided_.end() : decided_.find(outs[0].id());
      if (it == decided_.end()) {
        seen_all = false;
        break;
      }
      d[k].kind = it->second ? Saveability::save : Saveability::recompute;
    }
    if (seen_all && !d.empty()) return d;
    last_ = solve_memory_budget(jaxpr, in_unknown, bytes_);
    for (size_t k = 0; k < d.size(); ++k) {
      d[k].kind = last_->save[k] ? Saveability::save : Saveability::recompute;
      for (const Var& o : jaxpr.eqns[k].outputs) {
        keep_.push_back(o);  // keeps the id valid
        decided_[o.id()] = last_->save[k];
      }
    }
    return d;
  }
  const BudgetSolution* last() const { return last_ ? &*last_ : nullptr; }

 private:
  size_t bytes_;
  mutable std::optional<BudgetSolution> last_;
  mutable std::unordered_map<const void*, bool> decided_;  // eqn output -> saved
  mutable std::vector<Var> keep_;
};

}  // namespace

const BudgetSolution* last_solution(const PolicyRef& policy) {
  const auto* p = dynamic_cast<const BudgetPolicy*>(policy.get());
  return p ? p->last() : nullptr;
}

size_t parse_bytes(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  std::string number = text.substr(0, i), unit = text.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  static const std::map<std::string, double, std::less<>> units = {
      {"", 1},     {"B", 1},          {"k", 1e3},          {"kB", 1e3},
      {"K", 1024}, {"KiB", 1024},     {"M", 1048576},      {"MiB", 1048576},
      {"MB", 1e6}, {"G", 1073741824}, {"GiB", 1073741824}, {"GB", 1e9}};
  auto u = units.find(unit);
  char* end = nullptr;
  const double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  if (u == units.end() || v < 0 || !end || *end != '\0' || !std::isfinite(v * u->second) ||
      v * u->second > 1e18)
    throw UsageError(fmt::format(
        "'{}' is not a size: write bytes or a number with B, KiB, MiB, GiB, kB, MB or GB", text));
  return static_cast<size_t>(std::llround(v * u->second));
}

std::string format_bytes(size_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024.0);
  if (n < (size_t{1} << 30))
    return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1024.0 * 1024.0));
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace cjax::memory

namespace cjax::policies {

PolicyRef memory_budget(size_t bytes) {
  return std::make_shared<memory::BudgetPolicy>(bytes);
}

}  // namespace cjax::policies
