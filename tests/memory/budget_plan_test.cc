// memory_budget planned once and applied by remat2's partial evaluation: the plan a checkpoint
// carries is the one vjp applies (captured constants included), stacked budgeted checkpoints each
// see their real inputs, and a budgeted checkpoint inside a scan body keeps the gradient.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "cjax/api.h"
#include "passes/memory/budget_plan.h"
#include "passes/memory/memory_model.h"
#include "passes/vjp.h"

namespace cjax {
namespace {

namespace jnp = cjax::numpy;

// tanh(x * w) twice and a sum: values worth saving or recomputing.
Array block(const Array& x, const Array& w) {
  return jnp::tanh(jnp::tanh(x * w) * w);
}

void check_same(const Array& got, const Array& want) {
  const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(w[i]).epsilon(1e-6));
}

TEST_CASE("memory: the plan a checkpoint with captured constants carries is the one vjp applies") {
  const Array w = jnp::arange(Array(64.0f)) * 0.01f;  // captured: a constant of the body
  auto f = [&](const Array& x) { return jnp::sum(block(x, w)); };
  const Array x = jnp::arange(Array(64.0f)) * 0.02f;
  const Jaxpr plain = make_jaxpr(f)(x);
  const size_t peak = memory::model_vjp(plain).peak_bytes;
  auto remat = cjax::checkpoint(f, policies::memory_budget(peak - 256));
  const Jaxpr traced = make_jaxpr(remat)(x);
  const memory::MemoryPlan* plan = memory::memory_plan_of(traced);
  REQUIRE(plan != nullptr);
  // The constant has no tangent in the planned problem, as in the program vjp linearizes.
  CHECK(plan->problem.body.invars.size() == traced.eqns[0].inputs.size() + 1);
  CHECK_FALSE(plan->problem.in_unknown.at(0));
  const memory::StepModel real = memory::model_vjp(traced);
  // The plan models the body alone, where the constant is an argument (256 bytes, live
  // throughout); the real step holds it as the program's constant, which the model does not
  // count. The same save set, so the same recomputation.
  CHECK(real.peak_bytes + 64 * 4 == plan->solution.model.peak_bytes);
  CHECK(real.recompute_flops == plan->solution.model.recompute_flops);
  CHECK(real.peak_bytes <= peak - 256);
  UseInterpreter reference;
  check_same(cjax::grad(remat)(x), cjax::grad(f)(x));
}

TEST_CASE("memory: stacked budgeted checkpoints are each split with their real inputs") {
  const Array w = jnp::arange(Array(32.0f)) * 0.03f;
  auto layer = [](const Array& h, const Array& w) { return block(h, w); };
  auto first = cjax::checkpoint(layer, policies::memory_budget(1 << 20));
  auto second = cjax::checkpoint(layer, policies::memory_budget(1 << 20));
  auto f = [&](const Array& x, const Array& w) { return jnp::sum(second(first(x, w), w)); };
  auto plain = [&](const Array& x, const Array& w) { return jnp::sum(layer(layer(x, w), w)); };
  const Array x = jnp::arange(Array(32.0f)) * 0.05f;
  // The second checkpoint's input is the first's primal output: known, so its plan (made for
  // known primal inputs) applies as made, and a loose budget saves what no remat saves.
  const Jaxpr traced = make_jaxpr(f)(x, w);
  const VjpResult r = vjp_jaxpr(traced);
  CHECK(memory::model_step(r.fwd, r.bwd, r.num_residuals).recompute_flops == 0);
  UseInterpreter reference;
  auto [gx, gw] = cjax::grad(f, cjax::argnums<0, 1>)(x, w);
  auto [px, pw] = cjax::grad(plain, cjax::argnums<0, 1>)(x, w);
  check_same(gx, px);
  check_same(gw, pw);
}

TEST_CASE("memory: a budgeted checkpoint inside a scan body keeps the gradient") {
  auto layer = [](const Array& h, const Array& w) { return block(h, w); };
  auto remat = cjax::checkpoint(layer, policies::memory_budget(1 << 20));
  auto step_with = [](auto inner) {
    return [inner](const Array& h, const Array& w) {
      return std::pair<Array, std::tuple<>>{inner(h, w), {}};
    };
  };
  const Array ws = jnp::reshape(jnp::arange(Array(48.0f)) * 0.01f, {3, 16});
  const Array x = jnp::arange(Array(16.0f)) * 0.05f;
  auto loss = [&](auto inner) {
    return [=](const Array& x, const Array& ws) {
      return jnp::sum(scan(step_with(inner), x, ws).first);
    };
  };
  UseInterpreter reference;
  auto [gx, gw] = cjax::grad(loss(remat), cjax::argnums<0, 1>)(x, ws);
  auto [px, pw] = cjax::grad(loss(layer), cjax::argnums<0, 1>)(x, ws);
  check_same(gx, px);
  check_same(gw, pw);
}

}  // namespace
}  // namespace cjax
