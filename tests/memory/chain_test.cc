// Chains of equal layers: detection, Griewank's binomial schedule as nested checkpoints, and
// memory_budget choosing among the schedules.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "cjax/api.h"
#include "examples/registry.h"
#include "ir/byte_size.h"
#include "ir/call_body.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "ir/primitive.h"
#include "passes/memory/budget_plan.h"
#include "passes/memory/chain.h"
#include "passes/memory/chain_schedule.h"
#include "passes/memory/flops.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/memory/measure.h"

namespace cjax::memory {
namespace {

// h = sin(h), `d` times, on f32[n].
Jaxpr sin_chain(int d, int n = 4) {
  std::string eqns, prev = "x";
  for (int i = 0; i < d; ++i) {
    eqns += fmt::format("{}h{}:f32[{}] = sin {}", i ? "; " : "", i, n, prev);
    prev = fmt::format("h{}", i);
  }
  return *parse_jaxpr(fmt::format("{{ lambda ; x:f32[{}]. let {} in ({},) }}", n, eqns, prev));
}

// h = tanh(h * w_i + b_i), `d` layers of f32[8] with their own weights, then sum(h).
Jaxpr tanh_mlp(int d) {
  std::string args = "x:f32[8]", eqns, prev = "x";
  for (int i = 0; i < d; ++i) {
    args += fmt::format(" w{0}:f32[8] b{0}:f32[8]", i);
    eqns += fmt::format("m{0}:f32[8] = mul {1} w{0}; a{0}:f32[8] = add m{0} b{0}; ", i, prev);
    eqns += fmt::format("h{0}:f32[8] = tanh a{0}; ", i);
    prev = fmt::format("h{}", i);
  }
  eqns += fmt::format("s:f32[] = reduce_sum[axes=(0,) out_sharding=None] {}", prev);
  return *parse_jaxpr(fmt::format("{{ lambda ; {}. let {} in (s,) }}", args, eqns));
}

// h = tanh(h * w + b), `d` layers of f32[64] sharing w and b, then sum(h).
Jaxpr tanh_rnn(int d) {
  std::string eqns, prev = "x";
  for (int i = 0; i < d; ++i) {
    eqns += fmt::format("m{0}:f32[64] = mul {1} w; a{0}:f32[64] = add m{0} b; ", i, prev);
    eqns += fmt::format("h{0}:f32[64] = tanh a{0}; ", i);
    prev = fmt::format("h{}", i);
  }
  eqns += fmt::format("s:f32[] = reduce_sum[axes=(0,) out_sharding=None] {}", prev);
  return *parse_jaxpr(
      fmt::format("{{ lambda ; x:f32[64] w:f32[64] b:f32[64]. let {} in (s,) }}", eqns));
}

std::vector<std::vector<double>> gradients(const Jaxpr& j) {
  return testing::interpreter_gradients(j, [](size_t i) { return 0.3 + 0.1 * double(i % 5); });
}

// Equal up to float rounding: the layers sharing w and b add their cotangent contributions in the
// order the schedule reverses them, which nesting regroups.
bool close(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (size_t k = 0; k < a[i].size(); ++k)
      if (std::abs(a[i][k] - b[i][k]) > 1e-6 * std::max(1.0, std::abs(b[i][k]))) return false;
  }
  return true;
}

size_t count_remat(const Jaxpr& j) {
  size_t n = 0;
  for (const Eqn& e : j.eqns)
    if (const Jaxpr* body = call_body(e)) n += (e.prim->name == "remat2") + count_remat(*body);
  return n;
}

TEST_CASE("memory: the revolve recursion attains Griewank's binomial bound") {
  for (size_t s = 1; s <= 8; ++s)
    for (size_t d = 1; d <= 80; ++d) {
      INFO("D " << d << " s " << s);
      CHECK(revolve_cost(d, s) == revolve_closed_form(d, s));
    }
  // C(s+r, s) steps are the most s snapshots reverse with r repetitions: there the bound is
  // r*D - C(s+r, s+1); one step more needs a repetition more.
  for (size_t s = 1; s <= 5; ++s)
    for (size_t r = 1; r <= 5; ++r) {
      const size_t d = revolve_max_steps(s, r);
      CHECK(revolve_cost(d, s) == r * d - revolve_max_steps(s + 1, r - 1));
      CHECK(revolve_cost(d + 1, s) - revolve_cost(d, s) == r + 1);
    }
  CHECK(revolve_max_steps(2, 3) == 10);
  CHECK(revolve_cost(1, 0) == 0);
  CHECK(revolve_cost(2, 0) == kUnreachable);
  CHECK(revolve_cost(16, 1) == 120);  // one slot: step i is recomputed from the start
  CHECK(revolve_cost(16, 4) == 27);
}

TEST_CASE("memory: chains of equal layers are found") {
  for (int d = 2; d <= 12; ++d) {
    std::optional<Chain> c = find_chain(sin_chain(d));
    REQUIRE(c);
    CHECK(c->depth == static_cast<size_t>(d));
    CHECK(c->length == 1);
    CHECK(c->first == 0);
  }
  // Per-layer weights are inputs; the sum after the last layer stays outside the chain.
  std::optional<Chain> mlp = find_chain(tanh_mlp(6));
  REQUIRE(mlp);
  CHECK(mlp->depth == 6);
  CHECK(mlp->length == 3);
  CHECK(mlp->first == 0);
  CHECK(mlp->carry.size() == 7);
  CHECK(find_chain(examples::get("tutorial/chain16").make_jaxpr())->depth == 16);
  CHECK(find_chain(tanh_rnn(5))->depth == 5);
  // Not chains: one layer; a layer that reads two values of the previous one; a value that
  // escapes its layer.
  CHECK(!find_chain(sin_chain(1)));
  CHECK(
      !find_chain(*parse_jaxpr("{ lambda ; x:f32[4]. let a:f32[4] = sin x; b:f32[4] = cos x; "
                               "c:f32[4] = mul a b in (c,) }")));
  std::optional<Chain> escape = find_chain(
      *parse_jaxpr("{ lambda ; x:f32[4]. let a:f32[4] = sin x; b:f32[4] = sin a; c:f32[4] = sin b; "
                   "d:f32[4] = sin c; e:f32[4] = add a d in (e,) }"));
  // `a` is read after the chain: the chain starts after it.
  REQUIRE(escape);
  CHECK(escape->first == 1);
  CHECK(escape->depth == 3);
}

// Under JAX's semantics a nested checkpoint's backward pass recomputes its body: with the body
// [remat2(first m steps), the other D-m steps inline], reversing it runs the first m steps
// (their remat2's primal half), sweeps the inline part (its own nested remat2s' primal halves
// and its last step's derivative), then reverses each nested remat2 the same way. Counting a
// layer's primal FLOPs P (sin) and the FLOPs of its derivative J (cos), reversing D steps with s
// slots recomputes R(D, s) = t(D, s)*P + D*J. Without an outer checkpoint the forward pass runs
// the first sweep (D-1 advances and the last step's derivative are not recomputed), so the
// backward recomputes (t(D, s) - (D-1))*P + (D-1)*J; under an outer checkpoint that saves nothing
// it recomputes R(D, s). For sin, P = J = n.
TEST_CASE("memory: nested checkpoints along the binomial split tree recompute t(D, s) steps") {
  const double n = 4;
  bool halving_worse = false;
  for (int d = 2; d <= 12; ++d) {
    const Jaxpr j = sin_chain(d);
    const Chain c = *find_chain(j);
    const auto expected = gradients(j);
    for (size_t s = 1; s < static_cast<size_t>(d); ++s) {
      INFO("D " << d << " s " << s);
      const Jaxpr nested = nest_chain(j, c, s);
      CHECK(count_remat(nested) == static_cast<size_t>(d) - 1);
      const double t = static_cast<double>(revolve_cost(d, s));
      CHECK(model_vjp(nested).recompute_flops == t * n);
      CHECK(model_vjp(checkpoint_jaxpr(nested, policies::nothing_saveable())).recompute_flops ==
            (t + d) * n);
      CHECK(gradients(nested) == expected);
      // Recursive halving (recursive_checkpoint's split) never beats the binomial tree.
      // (With one slot left, the only tree splits off the last step.)
      const Jaxpr halved = nest_chain(
          j, c, s, [](size_t steps, size_t slots) { return slots == 1 ? steps - 1 : steps / 2; });
      const double h = model_vjp(halved).recompute_flops;
      CHECK(h >= t * n);
      halving_worse = halving_worse || h > t * n;
      CHECK(gradients(halved) == expected);
      // The model of each schedule is what the interpreter measures.
      VjpResult r = vjp_jaxpr(checkpoint_jaxpr(nested, policies::nothing_saveable()));
      CHECK(model_step(r.fwd, r.bwd, r.num_residuals).peak_bytes ==
            testing::measured_interpreter_peak(r.fwd, r.bwd, r.num_residuals));
    }
  }
  CHECK(halving_worse);
  CHECK_THROWS_AS(nest_chain(sin_chain(4), *find_chain(sin_chain(4)), 0), Error);
}

// Saving the first sweep's snapshots is one choice of the outer level, so under the peak of a
// schedule without outer recomputation the policy recomputes at most that schedule's t(D, s)
// steps (it may do better by mixing schedules and saved values).
TEST_CASE("memory: under a schedule's peak memory_budget recomputes at most t(D, s) steps") {
  const int d = 10;
  const double n = 4;
  const Jaxpr j = sin_chain(d);
  const Chain c = *find_chain(j);
  for (size_t s = 1; s < static_cast<size_t>(d); ++s) {
    const size_t peak = model_vjp(nest_chain(j, c, s)).peak_bytes;
    PolicyRef policy = policies::memory_budget(peak);
    const StepModel m = model_vjp(checkpoint_jaxpr(j, policy));
    INFO("s " << s << " peak " << peak);
    CHECK(m.peak_bytes <= peak);
    CHECK(m.recompute_flops <= static_cast<double>(revolve_cost(d, s)) * n);
  }
}

TEST_CASE("memory: memory_budget checkpoints a chain along the schedule that fits") {
  for (const bool shared_weights : {false, true}) {
    const Jaxpr j = shared_weights ? tanh_rnn(5) : sin_chain(10);
    const auto expected = gradients(j);
    const Jaxpr body = j;  // no constants: the checkpoint body is the function
    const Chain c = *find_chain(body);
    // The smallest peak of the body as written, and below it what the schedules reach.
    PlanProblem p = plan_problem(j);
    const size_t plain_smallest = pareto_frontier(p.body, p.in_unknown).front().model.peak_bytes;
    size_t smallest = plain_smallest;
    for (size_t s = 1; s < c.depth; ++s) {
      const Jaxpr nested = nest_chain(body, c, s);
      smallest = std::min(
          smallest, model_vjp(checkpoint_jaxpr(nested, policies::nothing_saveable())).peak_bytes);
    }
    REQUIRE(smallest < plain_smallest);
    bool nested_some = false;
    const size_t middle = (smallest + plain_smallest) / 2;
    for (size_t budget : {smallest, middle, plain_smallest + 8}) {
      INFO("budget " << budget);
      const Jaxpr checkpointed = checkpoint_jaxpr(j, policies::memory_budget(budget));
      VjpResult r = vjp_jaxpr(checkpointed);
      const StepModel real = model_step(r.fwd, r.bwd, r.num_residuals);
      const MemoryPlan* plan = memory_plan_of(checkpointed);
      REQUIRE(plan);
      const BudgetSolution* chosen = &plan->solution;
      CHECK(real.peak_bytes <= budget);
      CHECK(real.peak_bytes == chosen->model.peak_bytes);
      CHECK(real.recompute_flops == chosen->model.recompute_flops);
      CHECK(real.peak_bytes == testing::measured_interpreter_peak(r.fwd, r.bwd, r.num_residuals));
      if (shared_weights)
        CHECK(close(gradients(checkpointed), expected));
      else
        CHECK(gradients(checkpointed) == expected);
      // It is the cheapest of the schedules that fit, the body as written included.
      if (budget == middle)
        for (const ChainSchedule& s : chain_schedules(body, c, budget))
          if (s.solution) CHECK(real.recompute_flops <= s.solution->model.recompute_flops);
      const size_t slots = plan->chain_slots;
      nested_some = nested_some || slots > 0;
      CHECK(count_remat(checkpointed) == (slots > 0 ? c.depth : 1));
    }
    CHECK(nested_some);
    CHECK_THROWS_WITH(
        checkpoint_jaxpr(j, policies::memory_budget(smallest - 1)),
        Catch::Contains("no save set fits") &&
            Catch::Contains(fmt::format("is {} ({} bytes)", format_byte_size(smallest), smallest)));
  }
}

}  // namespace
}  // namespace cjax::memory

namespace cjax {
namespace {

TEST_CASE("cjax::checkpoint with memory_budget nests a traced chain and keeps its gradient") {
  namespace jnp = cjax::numpy;
  auto chain = [](const Array& x) {
    Array h = x;
    for (int i = 0; i < 10; ++i) h = jnp::sin(h);
    return jnp::sum(h);
  };
  const Array x = jnp::arange(Array(256.0f)) * 0.004f;
  // 256 floats per value: a budget between nothing_saveable's peak and saving everything.
  auto remat = cjax::checkpoint(chain, policies::memory_budget(9 * 1024));
  const Jaxpr traced = make_jaxpr(remat)(x);
  REQUIRE(traced.eqns.size() >= 1);
  const Jaxpr& body = *traced.eqns[0].params.get_jaxpr("jaxpr");
  size_t nested = 0;
  for (const Eqn& e : body.eqns) nested += e.prim->name == "remat2";
  CHECK(nested > 0);  // rebuilt as nested checkpoints
  UseInterpreter reference;
  const Array want = cjax::grad(chain)(x), got = cjax::grad(remat)(x);
  const auto w = want.to_vector<float>(), g = got.to_vector<float>();
  REQUIRE(w.size() == g.size());
  for (size_t i = 0; i < w.size(); ++i) CHECK(g[i] == Approx(w[i]).epsilon(1e-6));
}

}  // namespace
}  // namespace cjax
