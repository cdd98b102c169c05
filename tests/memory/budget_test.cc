// policies::memory_budget: optimal against brute force, the same gradient as no remat, and an
// impossible budget named with the smallest feasible peak.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "examples/registry.h"
#include "ir/byte_size.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "passes/memory/budget_plan.h"
#include "passes/remat.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/memory/measure.h"

namespace cjax::memory::budget_test {  // chain_test.cc has a gradients() of its own
namespace {

// A random differentiable program: `n` eqns over f32[4] and f32[16] values, each reading one or
// two earlier values (unary: sin, cos, exp, tanh; binary: mul, add), ending in a sum.
Jaxpr random_program(std::mt19937& rng, int n) {
  std::vector<std::string> names = {"a", "b"};
  std::vector<int> sizes = {4, 16};
  std::string body;
  auto pick = [&](int size) {
    std::vector<size_t> same;
    for (size_t i = 0; i < names.size(); ++i)
      if (sizes[i] == size) same.push_back(i);
    return same[std::uniform_int_distribution<size_t>(0, same.size() - 1)(rng)];
  };
  for (int k = 0; k < n; ++k) {
    const int size = std::uniform_int_distribution<int>(0, 1)(rng) ? 4 : 16;
    const std::string out = fmt::format("v{}", k);
    const int op = std::uniform_int_distribution<int>(0, 5)(rng);
    static const char* const kOps[] = {"sin", "cos", "exp", "tanh", "mul", "add"};
    if (op < 4)
      body += fmt::format("{}:f32[{}] = {} {}; ", out, size, kOps[op], names[pick(size)]);
    else
      body += fmt::format("{}:f32[{}] = {} {} {}; ", out, size, kOps[op], names[pick(size)],
                          names[pick(size)]);
    names.push_back(out);
    sizes.push_back(size);
  }
  // Sum the last value of each size so that both feed the output.
  const size_t last4 = pick(4), last16 = pick(16);
  body += fmt::format("s:f32[] = reduce_sum[axes=(0,) out_sharding=None] {}; ", names[last4]);
  body += fmt::format("t:f32[] = reduce_sum[axes=(0,) out_sharding=None] {}; ", names[last16]);
  body += "u:f32[] = add s t";
  return *parse_jaxpr(fmt::format("{{ lambda ; a:f32[4] b:f32[16]. let {} in (u,) }}", body));
}

TEST_CASE("memory: the budget solver is optimal against brute force on random programs") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const Jaxpr j = random_program(rng, 3 + trial % 4);
    PlanProblem p = plan_problem(j);
    const std::vector<size_t> cand = plan_candidates(p.body, p.in_unknown);
    REQUIRE(cand.size() <= kExactCandidates);
    // Every save set of the candidates, costed.
    std::vector<StepModel> all;
    for (uint64_t mask = 0; mask < (uint64_t{1} << cand.size()); ++mask) {
      std::vector<bool> save(p.body.eqns.size(), true);
      for (size_t i = 0; i < cand.size(); ++i) save[cand[i]] = (mask >> i) & 1;
      all.push_back(evaluate_plan(p.body, p.in_unknown, save).model);
    }
    size_t smallest = std::numeric_limits<size_t>::max();
    for (const StepModel& m : all) smallest = std::min(smallest, m.peak_bytes);
    for (const StepModel& budget_from : all) {
      const size_t budget = budget_from.peak_bytes;
      double best = std::numeric_limits<double>::infinity();
      for (const StepModel& m : all)
        if (m.peak_bytes <= budget) best = std::min(best, m.recompute_flops);
      BudgetSolution s = solve_memory_budget(p.body, p.in_unknown, budget);
      INFO("trial " << trial << " budget " << budget);
      CHECK(s.exact);
      CHECK(s.model.peak_bytes <= budget);
      CHECK(s.model.recompute_flops == best);
    }
    INFO("trial " << trial);
    CHECK_THROWS_WITH(solve_memory_budget(p.body, p.in_unknown, smallest - 1),
                      Catch::Contains(fmt::format("the smallest feasible peak is {} ({} bytes)",
                                                  format_byte_size(smallest), smallest)));
  }
}

// Gradients of `j` at inputs of 0.5 (every argument), with the interpreter.
std::vector<std::vector<double>> gradients(const Jaxpr& j) {
  return testing::interpreter_gradients(j, [](size_t) { return 0.5; });
}

TEST_CASE("memory: every save set the budget policy chooses gives the gradient without remat") {
  std::mt19937 rng(11);
  std::vector<Jaxpr> programs = {examples::get("tutorial/f").make_jaxpr(),
                                 examples::get("tutorial/loss").make_jaxpr()};
  for (int k = 0; k < 4; ++k) programs.push_back(random_program(rng, 5));
  for (const Jaxpr& j : programs) {
    const auto expected = gradients(j);
    PlanProblem p = plan_problem(j);
    for (const BudgetSolution& point : pareto_frontier(p.body, p.in_unknown)) {
      const size_t budget = point.model.peak_bytes;
      const Jaxpr checkpointed = checkpoint_jaxpr(j, policies::memory_budget(budget));
      INFO("budget " << budget);
      CHECK(gradients(checkpointed) == expected);
      // The programs vjp builds under the policy have the peak the solver planned.
      VjpResult r = vjp_jaxpr(checkpointed);
      const MemoryPlan* plan = memory_plan_of(checkpointed);
      REQUIRE(plan != nullptr);
      CHECK(model_step(r.fwd, r.bwd, r.num_residuals).peak_bytes <= budget);
      CHECK(plan->solution.model.recompute_flops == point.model.recompute_flops);
    }
  }
}

TEST_CASE("memory: budgets on the tutorial's loss trade residuals for recomputation") {
  const Jaxpr loss = examples::get("tutorial/loss").make_jaxpr();
  PlanProblem p = plan_problem(loss);
  std::vector<BudgetSolution> front = pareto_frontier(p.body, p.in_unknown);
  REQUIRE(front.size() >= 2);
  // Saving everything JAX saves without remat is the cheapest end; saving nothing the smallest.
  CHECK(front.back().model.recompute_flops == 0);
  CHECK(front.back().model.peak_bytes == model_vjp(loss).peak_bytes);
  CHECK(front.front().model.residual_bytes == 0);
  for (size_t i = 1; i < front.size(); ++i) {
    CHECK(front[i].model.peak_bytes > front[i - 1].model.peak_bytes);
    CHECK(front[i].model.recompute_flops < front[i - 1].model.recompute_flops);
  }
  CHECK_THROWS_AS(solve_memory_budget(p.body, p.in_unknown, front.front().model.peak_bytes - 1),
                  Error);
}

}  // namespace
}  // namespace cjax::memory::budget_test
