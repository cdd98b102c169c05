// recompute_cheap_residuals: the vjp pair compiled code runs keeps fewer residuals and recomputes
// elementwise ones in the backward program; the gradient stays the same, bit for bit on the
// interpreter (the same primitives run on the same values), and compiled code matches it.
#include <catch2/catch.hpp>

#include <cstring>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "examples/registry.h"
#include "ir/parse/parser.h"
#include "passes/recompute_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

namespace jnp = numpy;

size_t residual_bytes(const Jaxpr& fwd, size_t num_residuals) {
  size_t bytes = 0;
  const size_t m = fwd.outvars.size() - num_residuals;
  for (size_t k = m; k < fwd.outvars.size(); ++k) {
    const Atom& r = fwd.outvars[k];
    bool argument = false;
    for (const Var& v : fwd.invars) argument = argument || (r.is_var() && r.var() == v);
    if (!argument) bytes += static_cast<size_t>(r.aval().nbytes());
  }
  return bytes;
}

// Forward then backward on the interpreter with ones for cotangents: primal outputs, gradients.
std::vector<runtime::Buffer> run_step(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals,
                                      const std::vector<runtime::Buffer>& inputs) {
  std::vector<runtime::Buffer> outs = runtime::eval_jaxpr(fwd, inputs);
  const size_t m = outs.size() - num_residuals;
  std::vector<runtime::Buffer> bwd_in(outs.begin() + static_cast<long>(m), outs.end());
  for (size_t i = 0; i < m; ++i) bwd_in.push_back(runtime::Buffer::full(outs[i].aval(), 1.0));
  std::vector<runtime::Buffer> result(outs.begin(), outs.begin() + static_cast<long>(m));
  for (runtime::Buffer& g : runtime::eval_jaxpr(bwd, bwd_in)) result.push_back(std::move(g));
  return result;
}

void require_identical(const runtime::Buffer& got, const runtime::Buffer& want) {
  REQUIRE(got.aval().shape == want.aval().shape);
  REQUIRE(got.aval().dtype == want.aval().dtype);
  REQUIRE(std::memcmp(got.data(), want.data(), static_cast<size_t>(want.aval().nbytes())) == 0);
}

TEST_CASE("every example's step is unchanged, bit for bit, with cheap residuals recomputed") {
  size_t changed = 0;
  for (const examples::Example& ex : examples::all()) {
    INFO(ex.name);
    const Jaxpr j = ex.make_jaxpr();
    bool floats = true;
    for (const ShapedArray& a : j.out_avals()) floats = floats && is_floating(a.dtype);
    if (!floats) continue;
    const VjpResult p = vjp_jaxpr(j, std::vector<bool>(j.outvars.size(), true));
    const ResidualSplit s = recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
    CHECK(residual_bytes(s.fwd, s.num_residuals) <= residual_bytes(p.fwd, p.num_residuals));
    if (s.recomputed > 0) {
      ++changed;
      CHECK(residual_bytes(s.fwd, s.num_residuals) < residual_bytes(p.fwd, p.num_residuals));
    }
    const auto inputs = ex.default_inputs();
    const auto want = run_step(p.fwd, p.bwd, p.num_residuals, inputs);
    const auto got = run_step(s.fwd, s.bwd, s.num_residuals, inputs);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("output " << i);
      require_identical(got[i], want[i]);
    }
  }
  CHECK(changed >= 1);  // block/mlp (the tutorial programs keep sin/cos values: transcendental)
}

TEST_CASE("block/mlp keeps the dot, tanh and GELU outputs and recomputes the other three") {
  const examples::Example& ex = examples::get("block/mlp");
  const Jaxpr j = ex.make_jaxpr();
  const VjpResult p = vjp_jaxpr(j, {true});
  const ResidualSplit s = recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
  CHECK(s.recomputed == 3);  // 3·x², 1 − tanh(…) and 0.5·(1 + tanh(…))
  CHECK(s.num_residuals == p.num_residuals - 3);
  // 6 MiB fewer: three f32[64,8192] arrays.
  CHECK(residual_bytes(p.fwd, p.num_residuals) - residual_bytes(s.fwd, s.num_residuals) ==
        3u * 64 * 8192 * 4);
  // The forward program no longer computes what only the residuals needed (x², 3·x², 1 − tanh).
  CHECK(s.fwd.eqns.size() == p.fwd.eqns.size() - 3);
  // Compiled, both programs match the interpreter.
  const auto inputs = ex.default_inputs();
  auto fwd = lower::compile(s.fwd, "block/mlp (forward)");
  auto bwd = lower::compile(s.bwd, "block/mlp (backward)");
  std::vector<runtime::Buffer> outs = fwd->run(inputs);
  const auto want_outs = runtime::eval_jaxpr(s.fwd, inputs);
  for (size_t i = 0; i < outs.size(); ++i) test::require_close(outs[i], want_outs[i]);
  std::vector<runtime::Buffer> bwd_in(outs.begin() + 1, outs.end());
  bwd_in.push_back(runtime::Buffer::full(j.out_avals()[0], 1.0));
  const auto grads = bwd->run(bwd_in), want = runtime::eval_jaxpr(s.bwd, bwd_in);
  for (size_t i = 0; i < grads.size(); ++i) test::require_close(grads[i], want[i]);
}

TEST_CASE("an elementwise residual of a value nobody keeps stays a residual") {
  // The residual is cos(x @ w); recomputing it would need the dot's output, which is not kept.
  const Jaxpr j = make_jaxpr([](const Array& x, const Array& w) {
    return jnp::sum(jnp::sin(jnp::dot(x, w)));
  })(jnp::ones({2, 3}), jnp::ones({3, 4}));
  const VjpResult p = vjp_jaxpr(j, {true});
  const ResidualSplit s = recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
  CHECK(s.recomputed == 0);
  CHECK(s.num_residuals == p.num_residuals);
  CHECK(s.bwd.eqns.size() == p.bwd.eqns.size());
}

TEST_CASE("residuals recomputed from an argument make the argument a residual") {
  // d/dx sum((x + 1)²) reads y = x + 1; recomputing it needs x, which the caller holds anyway.
  const Jaxpr j = make_jaxpr([](const Array& x) {
    const Array y = x + 1.0;
    return jnp::sum(y * y);
  })(jnp::ones({5}));
  const VjpResult p = vjp_jaxpr(j, {true});
  REQUIRE(p.num_residuals == 1);
  const ResidualSplit s = recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
  CHECK(s.recomputed == 1);
  REQUIRE(s.num_residuals == 1);
  REQUIRE(s.fwd.outvars.back().is_var());
  CHECK(s.fwd.outvars.back().var() == s.fwd.invars[0]);
  CHECK(residual_bytes(s.fwd, s.num_residuals) == 0);
}

TEST_CASE("transcendental residuals are kept, not recomputed") {
  // cos(x) and exp(sin(x)) would need a polynomial or libm call per element again.
  const Jaxpr j =
      make_jaxpr([](const Array& x) { return jnp::sum(jnp::exp(jnp::sin(x))); })(jnp::ones({5}));
  const VjpResult p = vjp_jaxpr(j, {true});
  const ResidualSplit s = recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
  CHECK(s.recomputed == 0);
  CHECK(s.num_residuals == p.num_residuals);
}

TEST_CASE("a residual the backward program feeds to a dot is kept") {
  // h = u·u (u = x @ w1) is cheap to recompute, but w2's cotangent product reads it: recomputing
  // it would add a loop writing it again.
  const Jaxpr j = make_jaxpr([](const Array& x, const Array& w1, const Array& w2) {
    const Array u = jnp::dot(x, w1);
    return jnp::sum(jnp::dot(u * u, w2));
  })(jnp::ones({2, 3}), jnp::ones({3, 4}), jnp::ones({4, 5}));
  const VjpResult p = vjp_jaxpr(j, {true});
  const ResidualSplit s = recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
  CHECK(s.recomputed == 0);
  bool keeps_h = false;
  for (size_t k = s.fwd.outvars.size() - s.num_residuals; k < s.fwd.outvars.size(); ++k)
    for (const Eqn& e : s.fwd.eqns)
      if (e.prim->name == "mul" && s.fwd.outvars[k].is_var() &&
          e.outputs[0] == s.fwd.outvars[k].var())
        keeps_h = true;
  CHECK(keeps_h);
}

TEST_CASE("a value returned as two residuals, one of them kept, is read from the kept one") {
  // b is returned twice; the backward program feeds the first copy to a dot (kept) and the
  // second to a mul (recomputable, but b is available from the first copy).
  const JaxprRef fwd = parse_jaxpr(
      "{ lambda ; a:f32[3,3]. let b:f32[3,3] = mul a 2.0:f32[]; c:f32[3,3] = sin b in (c, b, b) }");
  const JaxprRef bwd = parse_jaxpr(
      "{ lambda ; r:f32[3,3] s:f32[3,3] t:f32[3,3]. let "
      "u:f32[3,3] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] t r; v:f32[3,3] = mul u s in (v,) }");
  const ResidualSplit split = recompute_cheap_residuals(*fwd, *bwd, 2);
  CHECK(split.recomputed == 1);
  REQUIRE(split.num_residuals == 1);
  std::mt19937 rng(5);
  const runtime::Buffer a = test::random_buffer(fwd->invars[0].aval(), rng, -1, 1);
  const auto want = run_step(*fwd, *bwd, 2, {a});
  const auto got = run_step(split.fwd, split.bwd, 1, {a});
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) require_identical(got[i], want[i]);
}

}  // namespace
}  // namespace cjax
