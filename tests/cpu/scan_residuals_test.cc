// A scan's cheap residuals recomputed by the scan that differentiates it
// (passes/scan_residuals.h): the forward scan of a gradient stacks fewer arrays, the backward
// scan recomputes them from the stacks kept, the forward scan's constants and its scanned-over
// inputs, and the program's values do not change (bit for bit on the interpreter, within the
// back end's tolerance compiled).
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "passes/pipeline.h"
#include "passes/scan_residuals.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace scan_residuals_test {
namespace {

namespace np = cjax::numpy;

// A GELU-like step: `v` needs only the constant w and the slice x (recomputable in the backward
// scan), `gate` only tanh(u) (a kept residual, tanh being too costly to recompute), `u` the
// carry (kept: the backward scan has no carries of the forward one).
// With `wrt_xs` false, the backward scan needs neither xs nor the constant c (an argument not
// differentiated) for itself: the recomputation hands them over.
Jaxpr gradient_program(bool wrt_xs) {
  auto loss = [](const Array& w, const Array& h0, const Array& xs, const Array& c) {
    auto step = [&](const Array& h, const Array& x) {
      const Array u = h * w + x;
      const Array v = x * c + 1.0f;
      const Array gate = (np::tanh(u) + 1.0f) * 0.5f;
      const Array next = u * gate * v;
      return std::pair{next, next};
    };
    auto [h, ys] = scan(step, h0, xs);
    return np::sum(h) + np::sum(ys * ys);
  };
  const ShapeDtype w{DType::f32, {16}}, h0{DType::f32, {16}}, xs{DType::f32, {9, 16}};
  if (wrt_xs) return make_jaxpr(value_and_grad(loss, {0, 1, 2}))(w, h0, xs, w);
  return make_jaxpr(value_and_grad(loss, {0, 1}))(w, h0, xs, w);
}

size_t num_consts_of_second_scan(const Jaxpr& j) {
  size_t seen = 0;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == "scan" && ++seen == 2) return size_t(e.params.get_int("num_consts"));
  return 0;
}

const Eqn& first_scan(const Jaxpr& j) {
  for (const Eqn& e : j.eqns)
    if (e.prim->name == "scan") return e;
  FAIL("no scan");
  return j.eqns.front();
}

TEST_CASE("a gradient's forward scan stacks fewer residuals, and the values do not change") {
  const bool wrt_xs = GENERATE(true, false);
  INFO("gradient with respect to xs: " << wrt_xs);
  const Jaxpr program = gradient_program(wrt_xs);
  const Jaxpr rewritten = recompute_scan_residuals(program);
  // Without xs' gradient, the backward scan gains the constant c (and the xs) to recompute v.
  CHECK(num_consts_of_second_scan(rewritten) ==
        num_consts_of_second_scan(program) + (wrt_xs ? 0 : 1));
  const Eqn& before = first_scan(program);
  const Eqn& after = first_scan(rewritten);
  INFO(to_string(rewritten));
  CHECK(after.outputs.size() < before.outputs.size());
  // The backward scan now reads the forward scan's constant and scanned-over input itself.
  size_t scans = 0;
  for (const Eqn& e : rewritten.eqns) scans += e.prim->name == "scan";
  CHECK(scans == 2);

  const auto in = test::random_inputs(program, -0.8, 0.8, 5);
  const auto want = runtime::eval_jaxpr(program, in);
  const auto got = runtime::eval_jaxpr(rewritten, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i].to_doubles() == want[i].to_doubles());  // the same operations

  // Compiled through prepare_for_lowering (which runs the pass), against the interpreter.
  CHECK(first_scan(prepare_for_lowering(program)).outputs.size() == after.outputs.size());
  const auto compiled = lower::compile(program, "scan_residuals")->run(in);
  REQUIRE(compiled.size() == want.size());
  for (size_t i = 0; i < compiled.size(); ++i) test::require_close(compiled[i], want[i]);
}

TEST_CASE("a residual computed from the carry alone stays stacked") {
  // u * u needs the carry's u: the backward scan cannot recompute it, so nothing changes.
  auto loss = [](const Array& h0, const Array& xs) {
    auto step = [&](const Array& h, const Array& x) {
      const Array u = np::sin(h) * 2.0f;
      return std::pair{u * u + x, x};
    };
    auto [h, ys] = scan(step, h0, xs);
    return np::sum(h) + np::sum(ys);
  };
  const Jaxpr program =
      make_jaxpr(grad(loss))(ShapeDtype{DType::f32, {4}}, ShapeDtype{DType::f32, {3, 4}});
  const Jaxpr rewritten = recompute_scan_residuals(program);
  CHECK(first_scan(rewritten).outputs.size() == first_scan(program).outputs.size());
}

}  // namespace
}  // namespace scan_residuals_test
}  // namespace cjax
