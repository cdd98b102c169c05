// The built-in examples custom/clip_gradient and custom/stable_logsumexp: their printouts and
// gradients against what jax 0.11.2 printed and computed (tests/golden/jax_0_11_2/custom.md).
#include <catch2/catch.hpp>

#include "examples/registry.h"
#include "ir/print/printer.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace custom_example_test {

// The gradient of the example's scalar output, by the vjp pass and the interpreter.
std::vector<double> gradient(const examples::Example& ex) {
  const Jaxpr f = ex.make_jaxpr();
  VjpResult r = vjp_jaxpr(f);
  std::vector<runtime::Buffer> fwd = runtime::eval_jaxpr(r.fwd, ex.default_inputs());
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(runtime::Buffer::full(f.outvars[0].aval(), 1.0));
  return runtime::eval_jaxpr(r.bwd, bwd_in).at(0).to_doubles();
}

TEST_CASE("custom/stable_logsumexp prints JAX's custom_jvp_call and differentiates by its rule") {
  const examples::Example& ex = examples::get("custom/stable_logsumexp");
  CHECK(to_string(ex.make_jaxpr()) == golden::jax_case("custom.md", "custom_jvp jaxpr"));
  const std::vector<double> want =
      golden::numbers(golden::jax_case("custom.md", "custom_jvp grad values"));
  const std::vector<double> got = gradient(ex);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5));
}

TEST_CASE("custom/clip_gradient's bwd clips the gradient of sum(3 x) to 1") {
  const examples::Example& ex = examples::get("custom/clip_gradient");
  const std::string printed = to_string(ex.make_jaxpr());
  CHECK(printed.find("custom_vjp_call[\n      name=clip_gradient\n      bwd=_clip_bwd") !=
        std::string::npos);
  for (double g : gradient(ex)) CHECK(g == 1.0);
}

}  // namespace custom_example_test
}  // namespace cjax
