// memory_budget on a chain of equal layers: besides the body as written, it costs the body nested
// as checkpoints for every number of snapshot slots (chain.h), each with the per-value solver
// deciding what the outer level keeps (which snapshots the first sweep saves, say), and
// checkpoints the schedule with the fewest recomputed FLOPs whose modelled peak fits.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/memory/budget.h"
#include "passes/memory/chain.h"

namespace cjax::memory {

struct ChainSchedule {
  size_t slots = 0;  // 0: the body as written
  Jaxpr body;        // what the checkpoint holds
  // The per-value solver's choice on `body` under the budget; nullopt when nothing fits.
  std::optional<BudgetSolution> solution;
  PlanProblem problem;       // what the policy plans for `body` under vjp
  size_t smallest_peak = 0;  // the smallest peak the solver found on `body`
  bool exact = false;        // its search was exhaustive
};

// The slot counts costed for a chain of `depth` layers: 1..8, then about 25% apart, and D-1.
std::vector<size_t> chain_slot_counts(size_t depth);

// The body as written, then nest_chain(body, chain, s) for each chain_slot_counts(D), by slots,
// each solved under `budget` (a checkpoint body: its first `num_consts` inputs are constants). A
// schedule whose least recomputation cannot beat a cheaper one that fits is left without a
// solution.
std::vector<ChainSchedule> chain_schedules(const Jaxpr& body, const Chain& chain, size_t budget,
                                           size_t num_consts = 0);

// The schedule with the fewest recomputed FLOPs that fits (then the smaller peak, then the body
// as written, then fewer slots). Throws cjax::Error naming the smallest peak found when none fits.
const ChainSchedule& pick_chain_schedule(const std::vector<ChainSchedule>& schedules,
                                         size_t budget);

}  // namespace cjax::memory
