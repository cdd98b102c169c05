// policies::memory_budget on functions whose body holds checkpoints of its own (remat2 eqns):
// the solver decides for the nested bodies' eqns too, and what it models is what vjp builds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include "examples/registry.h"
#include "ir/primitive.h"
#include "passes/memory/budget_plan.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"

namespace cjax::memory {
namespace {

bool has_remat(const Jaxpr& j) {
  return std::any_of(j.eqns.begin(), j.eqns.end(),
                     [](const Eqn& e) { return e.prim->name == "remat2"; });
}

TEST_CASE("memory: with nested checkpoints the budget solver models the programs vjp builds") {
  size_t programs = 0;
  for (const examples::Example& ex : examples::all()) {
    const Jaxpr j = ex.make_jaxpr();
    if (!has_remat(j)) continue;
    ++programs;
    INFO(ex.name);
    PlanProblem p = plan_problem(j);
    const std::vector<BudgetSolution> front = pareto_frontier(p.body, p.in_unknown);
    REQUIRE(!front.empty());
    // Saving nothing anywhere is a save set too: no built-in policy beats the smallest peak.
    for (const PolicyRef& builtin :
         {policies::everything_saveable(), policies::nothing_saveable(), policies::dots_saveable(),
          policies::dots_with_no_batch_dims_saveable()}) {
      INFO(builtin->repr());
      CHECK(front.front().model.peak_bytes <= model_vjp(checkpoint_jaxpr(j, builtin)).peak_bytes);
    }
    // The ends and the middle of the curve.
    std::vector<BudgetSolution> points = {front.front(), front[front.size() / 2], front.back()};
    for (const BudgetSolution& point : points) {
      const size_t budget = point.model.peak_bytes;
      const Jaxpr checkpointed = checkpoint_jaxpr(j, policies::memory_budget(budget));
      const StepModel real = model_vjp(checkpointed);
      const MemoryPlan* plan = memory_plan_of(checkpointed);
      REQUIRE(plan != nullptr);
      const BudgetSolution* chosen = &plan->solution;
      INFO("budget " << budget);
      CHECK(real.peak_bytes == chosen->model.peak_bytes);
      CHECK(real.recompute_flops == chosen->model.recompute_flops);
      CHECK(real.peak_bytes <= budget);
      CHECK(chosen->model.recompute_flops <= point.model.recompute_flops);
    }
  }
  CHECK(programs >= 8);  // tutorial/f2, f3, f4, recursive8, recursive16, the loss variants, ...
}

}  // namespace
}  // namespace cjax::memory
