#include "passes/memory/budget_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

#include "ir/call_body.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/memory/chain.h"
#include "passes/memory/chain_schedule.h"
#include "passes/memory/save_set.h"
#include "passes/util.h"

namespace cjax::memory {
namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

const MemoryBudget* budget_of(const Eqn& e) {
  if (e.prim->name != "remat2") return nullptr;
  const ParamValue* p = e.params.find("policy");
  return p && p->is<PolicyRef>() ? as_memory_budget(p->as<PolicyRef>()) : nullptr;
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

// Which values are unknown is followed forward (an eqn with an unknown input is unknown), as
// partial evaluation stages them; a call's body sees its operands' flags. nullopt: no budget in
// `j` (its calls keep sharing their bodies).
std::optional<Jaxpr> apply_in(const Jaxpr& j, const std::vector<bool>& in_unknown) {
  std::unordered_map<Var, bool, VarHash> unknown;
  for (size_t i = 0; i < j.invars.size(); ++i) unknown[j.invars[i]] = in_unknown.at(i);
  Jaxpr out = j;
  out.eqns.clear();
  bool changed = false;
  for (const Eqn& e : j.eqns) {
    std::vector<bool> flags;
    for (const Atom& in : e.inputs) {
      auto it = in.is_var() ? unknown.find(in.var()) : unknown.end();
      flags.push_back(it != unknown.end() && it->second);
    }
    Eqn copy = e;
    if (const MemoryBudget* budget = budget_of(e)) {
      const Jaxpr& body = *e.params.get_jaxpr("jaxpr");
      const BudgetSolution s = save_set_for(*budget, body, flags);
      NamedSaveSet named = apply_save_set(body, s.save, s.fallback);
      copy.params = with_jaxpr(e.params, std::move(named.body));
      copy.params.set("policy", named.policy);
      changed = true;
    } else if (const Jaxpr* body = call_body(e); body && e.prim->name != "remat2") {
      // (Another checkpoint's body is split by that checkpoint's policy: a budget inside it is
      // not asked.)
      if (std::optional<Jaxpr> applied = apply_in(*body, flags)) {
        copy.params.set(e.prim->call_body, JaxprRef(std::make_shared<const Jaxpr>(*applied)));
        changed = true;
      }
    }
    const bool any = std::find(flags.begin(), flags.end(), true) != flags.end();
    for (const Var& o : e.outputs) unknown[o] = any;
    out.eqns.push_back(std::move(copy));
  }
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace

PolicyDecision MemoryBudget::decide(const Primitive& prim, std::span<const ShapedArray>,
                                    const Params&) const {
  throw UsageError(fmt::format(
      "memory_budget decides per value and cannot answer for a lone '{}' eqn: use it as "
      "checkpoint's policy (outside loop and branch bodies), not inside save_from_both_policies",
      prim.name));
}

const MemoryBudget* as_memory_budget(const PolicyRef& policy) {
  return dynamic_cast<const MemoryBudget*>(policy.get());
}

MemoryPlan plan_memory_budget(const Jaxpr& body, size_t bytes) {
  const auto t0 = std::chrono::steady_clock::now();
  MemoryPlan plan;
  if (std::optional<Chain> chain = find_chain(body)) {
    // The body as written is one of the schedules; the pick's problem was solved there.
    const std::vector<ChainSchedule> schedules = chain_schedules(body, *chain, bytes);
    const ChainSchedule& pick = pick_chain_schedule(schedules, bytes);
    plan.body = pick.slots > 0 ? pick.body : body;
    plan.chain_slots = pick.slots;
    plan.problem = pick.problem;
    plan.solution = *pick.solution;
    plan.solution.solve_ms = ms_since(t0);  // every schedule's search
    return plan;
  }
  plan.body = body;
  plan.problem = plan_problem(body);
  plan.solution = solve_memory_budget(plan.problem.body, plan.problem.in_unknown, bytes);
  return plan;
}

CheckpointBody plan_checkpoint(Jaxpr body, PolicyRef policy) {
  const MemoryBudget* budget = as_memory_budget(policy);
  if (!budget || budget->planned()) return {std::move(body), std::move(policy)};
  auto plan = std::make_shared<const MemoryPlan>(plan_memory_budget(body, budget->bytes()));
  Jaxpr planned = plan->body;
  return {std::move(planned), std::make_shared<MemoryBudget>(budget->bytes(), std::move(plan))};
}

const MemoryPlan* memory_plan_of(const Jaxpr& checkpointed) {
  for (const Eqn& e : checkpointed.eqns)
    if (const MemoryBudget* budget = budget_of(e); budget && budget->planned())
      return budget->planned();
  return nullptr;
}

Jaxpr apply_memory_budgets(const Jaxpr& program, const std::vector<bool>& unknown) {
  std::optional<Jaxpr> applied = apply_in(program, unknown);
  return applied ? std::move(*applied) : program;
}

}  // namespace cjax::memory

namespace cjax::policies {

PolicyRef memory_budget(size_t bytes) {
  return std::make_shared<memory::MemoryBudget>(bytes, nullptr);
}

}  // namespace cjax::policies
