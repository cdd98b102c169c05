// The solver behind memory_budget (budget_plan.h): which values of a checkpoint's linearized body
// to save so that the step's modelled peak fits a budget with the fewest recomputed FLOPs.
//
// The solver's candidates are the known eqns whose outputs the backward side reads (directly or
// through other known eqns), those inside nested checkpoints included (partial_eval_jaxpr_custom
// splits them with the same policy): each is saved (a residual) or recomputed in the backward
// program. A choice is costed by running the passes vjp runs (partial evaluation of a remat2
// holding the body, transposition of its staged half) with a policy that plays the choice back,
// and the memory model (memory_model.h) on the programs they build; the choice is played to them
// as an ordinary policy (save_set.h). Up to kExactCandidates
// candidates the search is exact: every distinct recompute set, in order of increasing
// recomputed FLOPs, until the cheapest fit is certain. Beyond that a greedy knapsack starts from
// saving everything and stops saving, one at a time, the value that frees the most residual
// bytes per recomputed FLOP until the peak fits. Either way each built-in policy is costed as a
// whole too (its choices inside loop and branch bodies included, which a save set does not
// cover), so the smallest peak found is at most each of theirs.
// A chain of equal layers is also nested as checkpoints along Griewank's schedule
// (chain_schedule.h, budget_plan.h). docs/auto-remat.md explains the model and the trade-off.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ir/errors.h"
#include "ir/jaxpr.h"
#include "ir/policy.h"
#include "passes/memory/memory_model.h"

namespace cjax::memory {

inline constexpr size_t kExactCandidates = 10;
// The same limit for the outer level of a chain schedule (try_solve_memory_budget's outer_only).
inline constexpr size_t kExactOuterCandidates = 8;

// The jaxpr a memory budget plans: the linearized body of a checkpoint and which of its inputs
// are unknown (tangents).
struct PlanProblem {
  Jaxpr body;
  std::vector<bool> in_unknown;
};
// The problem checkpoint_jaxpr(jaxpr, memory_budget(...)) poses under vjp: the body of the remat2
// eqn that linearization's jvp makes of it. `num_consts`: the first inputs of `jaxpr` are
// constants (a checkpoint body's captured values), which get no tangent.
PlanProblem plan_problem(const Jaxpr& jaxpr, size_t num_consts = 0);

// The eqns a save set decides, in this order: the body's eqns, then (recursively) those of the
// bodies of its nested checkpoints (remat2) and jits, which partial_eval_jaxpr_custom splits with
// the same policy; the nested calls themselves are decided by their bodies. Every save vector
// below has one flag per entry.
std::vector<const Eqn*> plan_eqns(const Jaxpr& body);
// A nested checkpoint or jit, whose body's eqns are planned one by one (the call itself is not).
bool is_split_call(const Eqn& e);

// The eqns (indices into plan_eqns) whose save/recompute choice changes the programs.
std::vector<size_t> plan_candidates(const Jaxpr& body, const std::vector<bool>& in_unknown);

// The forward and backward programs (and the model of their step) when the eqns marked in
// `save` are saved and the other known eqns recomputed: the programs vjp builds for
// checkpoint(f, policy) when the policy makes these choices.
struct PlanCost {
  StepModel model;
  Jaxpr fwd, bwd;
};
// `fallback` decides inside the loop and branch bodies of the planned eqns, which a save set
// does not cover; null saves every value there.
PlanCost evaluate_plan(const Jaxpr& body, const std::vector<bool>& in_unknown,
                       const std::vector<bool>& save, const PolicyRef& fallback = nullptr);

struct BudgetSolution {
  std::vector<bool> save;  // per eqn of plan_eqns(body)
  // What decides inside the loop and branch bodies the save set does not cover: null saves
  // everything there; a built-in policy when the search chose that policy as a whole.
  PolicyRef fallback;
  StepModel model;     // of the chosen save set
  bool exact = false;  // proven optimal (exhaustive search)
  size_t candidates = 0, evaluations = 0;
  double solve_ms = 0;  // for a chain schedule: the search over every schedule
};
// The save set with the fewest recomputed FLOPs whose modelled peak is at most `budget` bytes.
// Throws InfeasibleBudget stating the smallest peak found when no save set fits. `outer_only`: as
// for try_solve_memory_budget below.
BudgetSolution solve_memory_budget(const Jaxpr& body, const std::vector<bool>& in_unknown,
                                   size_t budget, bool outer_only = false);

// What a search saw besides its choice.
struct SearchInfo {
  size_t smallest_peak = 0;  // the smallest peak among the save sets it costed
  bool exact = false;        // it was exhaustive
  bool pruned = false;       // nothing in it could beat flops_to_beat (outer_only)
};
// solve_memory_budget without the throw: nullopt when no save set fits. `outer_only`: decide only
// the body's own eqns and the values its nested checkpoints return (a chain schedule's
// snapshots); inside the nested checkpoints everything is recomputed, as their own policy (None)
// would; then the search stops early when saving the whole outer level does not recompute less
// than `flops_to_beat` (the best other schedule).
std::optional<BudgetSolution> try_solve_memory_budget(const Jaxpr& body,
                                                      const std::vector<bool>& in_unknown,
                                                      size_t budget, bool outer_only = false,
                                                      SearchInfo* info = nullptr,
                                                      double flops_to_beat = HUGE_VAL);
// No save set the search costed fits the budget; what() states the smallest peak it found.
struct InfeasibleBudget : cjax::Error {
  enum class Search { exhaustive, greedy, chain_schedules };
  InfeasibleBudget(size_t budget, size_t smallest_peak, Search search);
  size_t budget, smallest_peak;
};

// The trade-off curve: save sets none of which is beaten in both peak bytes and recomputed
// FLOPs, by increasing peak (exhaustive up to kExactCandidates, else the greedy sequence).
std::vector<BudgetSolution> pareto_frontier(const Jaxpr& body, const std::vector<bool>& in_unknown);

// The same planned eqns, primitive for primitive and type for type (the jvp of one body, traced
// twice): a save set for one is a save set for the other.
bool same_structure(const Jaxpr& a, const Jaxpr& b);

}  // namespace cjax::memory
