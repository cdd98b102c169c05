// memory_budget: automatic remat as a plan made once, then applied as an ordinary policy.
//
//   checkpoint(f, memory_budget(bytes))  ->  plan_memory_budget: the body (a chain of equal
//        layers nested as checkpoints when Griewank's schedule recomputes less, chain_schedule.h)
//        and the save set the solver chose for its linearized body (budget.h); the remat2 eqn
//        carries both in its policy param, a MemoryBudget.
//   partial evaluation of that remat2 (passes/remat.cc)  ->  apply_memory_budget: the save set
//        becomes `name` eqns on the saved values under a policy that saves exactly those
//        (save_set.h); the body is split, and the names are dropped again.
//
// A MemoryBudget is a Policy only so that it fits the remat2 eqn's `policy` param and prints as
// JAX would print a policy function; it never decides eqn by eqn. When partial evaluation meets a
// linearized body other than the one planned for (a function differentiated with respect to some
// of its inputs only, a checkpoint whose inputs are partly known), the budget is solved again,
// for that body.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/policy.h"
#include "passes/memory/budget.h"
#include "passes/memory/save_set.h"

namespace cjax::memory {

struct MemoryPlan {
  Jaxpr body;              // the checkpoint's body, nested as a chain schedule or as written
  size_t chain_slots = 0;  // the chain schedule's snapshot slots (0: the body as written)
  PlanProblem problem;     // the linearized body the save set is for
  BudgetSolution solution;
};

class MemoryBudget final : public Policy {
 public:
  MemoryBudget(size_t bytes, std::shared_ptr<const MemoryPlan> plan)
      : bytes_(bytes), plan_(std::move(plan)) {}
  std::string repr() const override { return "<function memory_budget at 0xXXXXXXXXXXXX>"; }
  // Throws UsageError: a budget decides per value (see above).
  PolicyDecision decide(const Primitive& prim, std::span<const ShapedArray> in_avals,
                        const Params& params) const override;
  size_t bytes() const { return bytes_; }
  // Null until checkpoint_jaxpr (or cjax::checkpoint) has planned it.
  const MemoryPlan* planned() const { return plan_.get(); }

 private:
  size_t bytes_;
  std::shared_ptr<const MemoryPlan> plan_;
};

// The policy as a memory budget, or null.
const MemoryBudget* as_memory_budget(const PolicyRef& policy);

// What checkpoint(f, memory_budget(bytes)) plans for `body` (a checkpoint body whose first
// `num_consts` inputs are constants, which have no tangent). Throws InfeasibleBudget, naming the
// smallest peak found, when nothing fits.
MemoryPlan plan_memory_budget(const Jaxpr& body, size_t bytes, size_t num_consts = 0);

// The body and policy param of a checkpoint of `body` under `policy`: for a memory budget not yet
// planned, the plan's body and a MemoryBudget carrying the plan; otherwise both unchanged.
struct CheckpointBody {
  Jaxpr body;
  PolicyRef policy;
};
CheckpointBody plan_checkpoint(Jaxpr body, PolicyRef policy, size_t num_consts = 0);

// The plan of the (first) checkpoint under a memory budget in `checkpointed`'s eqns, or null.
const MemoryPlan* memory_plan_of(const Jaxpr& checkpointed);

// For remat2's partial evaluation of `body` (a linearized checkpoint body; `in_unknown`: its
// tangent inputs) under `policy`: when the policy is a memory budget, the body with its save set
// named and the policy that saves those values; nullopt for any other policy.
std::optional<NamedSaveSet> apply_memory_budget(const PolicyRef& policy, const Jaxpr& body,
                                                const std::vector<bool>& in_unknown);

}  // namespace cjax::memory

namespace cjax::policies {

// Saves what minimizes the FLOPs the backward program recomputes subject to the step's modelled
// peak (memory_model.h) being at most `bytes`; an impossible budget is an InfeasibleBudget
// error naming the smallest peak found. A body that is a chain of equal layers may be nested as
// checkpoints following Griewank's binomial schedule first (chain_schedule.h). Plans the whole
// checkpointed function: use it as checkpoint(f, memory_budget(bytes)) (it cannot be combined
// with save_from_both_policies).
PolicyRef memory_budget(size_t bytes);

}  // namespace cjax::policies
