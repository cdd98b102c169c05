// The built-in example vmap/per_example_grads against what jax 0.11.2 printed and computed for
// the same program and inputs (tests/golden/jax_0_11_2/vmap.md).
#include <catch2/catch.hpp>

#include "examples/registry.h"
#include "ir/print/printer.h"
#include "runtime/interpreter.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace {

TEST_CASE("vmap/per_example_grads prints JAX's jaxpr and computes JAX's per-example db") {
  const examples::Example& ex = examples::get("vmap/per_example_grads");
  const Jaxpr j = ex.make_jaxpr();
  CHECK(to_string(j) == golden::jax_case("vmap.md", "per_example_grads jaxpr"));
  const std::vector<runtime::Buffer> out = runtime::eval_jaxpr(j, ex.default_inputs());
  REQUIRE(out.size() == 2);
  CHECK(out[0].aval().shape == Shape{32, 16});
  const std::vector<double> want =
      golden::numbers(golden::jax_case("vmap.md", "per_example_grads values"));
  const std::vector<double> got = out[1].to_doubles();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5));
}

}  // namespace
}  // namespace cjax
