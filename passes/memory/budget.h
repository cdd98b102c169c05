// Automatic remat under a memory budget. JAX's policies decide per primitive (its name, input
// avals and params); a budget has to decide per value, so policies::memory_budget uses the
// Policy::plan hook: partial_eval_jaxpr_custom shows it the whole (linearized) jaxpr it splits,
// and the policy answers for every eqn at once with the save set its solver chose.
//
// The solver's candidates are the known eqns whose outputs the backward side reads (directly or
// through other known eqns): each is saved (a residual) or recomputed in the backward program.
// A choice is costed by building the forward and backward programs it gives (as the remat rule
// and transposition build them) and running the memory model (memory_model.h) on them. Up to
// kExactCandidates candidates the search is exact: every distinct recompute set, in order of
// increasing recomputed FLOPs, until one fits. Beyond that a greedy knapsack starts from saving
// everything and stops saving, one at a time, the value that frees the most residual bytes per
// recomputed FLOP until the peak fits; the built-in policies' save sets are costed too.
// docs/auto-remat.md explains the model and the trade-off.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/policy.h"
#include "passes/memory/memory_model.h"

namespace cjax::memory {

inline constexpr size_t kExactCandidates = 10;

// The jaxpr a memory_budget policy plans: the linearized body of a checkpoint and which of its
// inputs are unknown (tangents).
struct PlanProblem {
  Jaxpr body;
  std::vector<bool> in_unknown;
};
// The problem checkpoint_jaxpr(jaxpr, memory_budget(...)) poses under vjp.
PlanProblem plan_problem(const Jaxpr& jaxpr);

// The eqns of `body` whose save/recompute choice changes the programs.
std::vector<size_t> plan_candidates(const Jaxpr& body, const std::vector<bool>& in_unknown);

// The forward and backward programs (and the model of their step) when the eqns marked in
// `save` are saved and the other known eqns recomputed.
struct PlanCost {
  StepModel model;
  Jaxpr fwd, bwd;
};
PlanCost evaluate_plan(const Jaxpr& body, const std::vector<bool>& in_unknown,
                       const std::vector<bool>& save);

struct BudgetSolution {
  std::vector<bool> save;  // per eqn of the body
  StepModel model;         // of the chosen save set
  bool exact = false;      // proven optimal (exhaustive search)
  size_t candidates = 0, evaluations = 0;
  double solve_ms = 0;
};
// The save set with the fewest recomputed FLOPs whose modelled peak is at most `budget` bytes.
// Throws cjax::Error stating the smallest feasible peak when no save set fits.
BudgetSolution solve_memory_budget(const Jaxpr& body, const std::vector<bool>& in_unknown,
                                   size_t budget);

// The trade-off curve: save sets none of which is beaten in both peak bytes and recomputed
// FLOPs, by increasing peak (exhaustive up to kExactCandidates, else the greedy sequence).
std::vector<BudgetSolution> pareto_frontier(const Jaxpr& body, const std::vector<bool>& in_unknown);

// The solution a memory_budget policy found the last time it planned (nullptr before that, or
// for another kind of policy).
const BudgetSolution* last_solution(const PolicyRef& policy);

// "24MiB", "1.5 GiB", "512KiB", "100kB", "4096" (bytes) -> bytes; UsageError otherwise.
size_t parse_bytes(const std::string& text);
// 1536 -> "1.5 KiB"; below 1 KiB in bytes ("96 B").
std::string format_bytes(size_t bytes);

}  // namespace cjax::memory

namespace cjax::policies {

// Saves what minimizes the FLOPs the backward program recomputes subject to the step's modelled
// peak (memory_model.h) being at most `bytes`; an impossible budget is a cjax::Error naming the
// smallest feasible peak. Plans the whole checkpointed function: use it as
// checkpoint(f, memory_budget(bytes)) (it cannot be combined with save_from_both_policies).
PolicyRef memory_budget(size_t bytes);

}  // namespace cjax::policies
