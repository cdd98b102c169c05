#include "passes/memory/budget_plan.h"

#include <fmt/format.h>

#include <chrono>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/memory/chain.h"
#include "passes/memory/chain_schedule.h"

namespace cjax::memory {
namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The save set for a budgeted checkpoint's linearized body: the plan's when the body is the one
// planned for, else solved for this body.
BudgetSolution save_set_for(const MemoryBudget& budget, const Jaxpr& body,
                            const std::vector<bool>& in_unknown) {
  const MemoryPlan* plan = budget.planned();
  if (plan && plan->problem.in_unknown == in_unknown && same_structure(plan->problem.body, body))
    return plan->solution;
  return solve_memory_budget(body, in_unknown, budget.bytes(), plan && plan->chain_slots > 0);
}

}  // namespace

PolicyDecision MemoryBudget::decide(const Primitive& prim, std::span<const ShapedArray>,
                                    const Params&) const {
  throw UsageError(fmt::format(
      "memory_budget decides per value and cannot answer for a lone '{}' eqn: use it as "
      "checkpoint's policy, not inside save_from_both_policies",
      prim.name));
}

const MemoryBudget* as_memory_budget(const PolicyRef& policy) {
  return dynamic_cast<const MemoryBudget*>(policy.get());
}

MemoryPlan plan_memory_budget(const Jaxpr& body, size_t bytes, size_t num_consts) {
  const auto t0 = std::chrono::steady_clock::now();
  MemoryPlan plan;
  if (std::optional<Chain> chain = find_chain(body)) {
    // The body as written is one of the schedules; the pick's problem was solved there.
    const std::vector<ChainSchedule> schedules = chain_schedules(body, *chain, bytes, num_consts);
    const ChainSchedule& pick = pick_chain_schedule(schedules, bytes);
    plan.body = pick.slots > 0 ? pick.body : body;
    plan.chain_slots = pick.slots;
    plan.problem = pick.problem;
    plan.solution = *pick.solution;
    plan.solution.solve_ms = ms_since(t0);  // every schedule's search
    return plan;
  }
  plan.body = body;
  plan.problem = plan_problem(body, num_consts);
  plan.solution = solve_memory_budget(plan.problem.body, plan.problem.in_unknown, bytes);
  return plan;
}

CheckpointBody plan_checkpoint(Jaxpr body, PolicyRef policy, size_t num_consts) {
  const MemoryBudget* budget = as_memory_budget(policy);
  if (!budget || budget->planned()) return {std::move(body), std::move(policy)};
  auto plan =
      std::make_shared<const MemoryPlan>(plan_memory_budget(body, budget->bytes(), num_consts));
  Jaxpr planned = plan->body;
  return {std::move(planned), std::make_shared<MemoryBudget>(budget->bytes(), std::move(plan))};
}

const MemoryPlan* memory_plan_of(const Jaxpr& checkpointed) {
  for (const Eqn& e : checkpointed.eqns) {
    const ParamValue* p = e.prim->name == "remat2" ? e.params.find("policy") : nullptr;
    if (const MemoryBudget* budget =
            p && p->is<PolicyRef>() ? as_memory_budget(p->as<PolicyRef>()) : nullptr;
        budget && budget->planned())
      return budget->planned();
  }
  return nullptr;
}

std::optional<NamedSaveSet> apply_memory_budget(const PolicyRef& policy, const Jaxpr& body,
                                                const std::vector<bool>& in_unknown) {
  const MemoryBudget* budget = as_memory_budget(policy);
  if (!budget) return std::nullopt;
  const BudgetSolution s = save_set_for(*budget, body, in_unknown);
  return apply_save_set(body, s.save, s.fallback);
}

}  // namespace cjax::memory

namespace cjax::policies {

PolicyRef memory_budget(size_t bytes) {
  return std::make_shared<memory::MemoryBudget>(bytes, nullptr);
}

}  // namespace cjax::policies
