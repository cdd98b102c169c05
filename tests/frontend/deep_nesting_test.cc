// Calls nested far deeper than a person writes them (a generator can): the gradient through 300
// nested jits and 40 nested scans is the chain rule's product. Differentiating such nests stays
// cheap: partial evaluation and DCE no longer re-walk the nest below every level
// (bench/nesting_bench.cc measures the growth with depth), and the memory model simulates each body
// once, not once per iteration of every loop around it.
#include <catch2/catch.hpp>

#include <cmath>

#include "cjax/api.h"
#include "passes/memory/memory_model.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/passes/nested_calls.h"

using namespace cjax;

namespace {

// d/dx of sin applied `n` times at x: the product of cos at each intermediate value.
double chain_derivative(double x, int n) {
  double d = 1;
  for (int i = 0; i < n; ++i) {
    d *= std::cos(x);
    x = std::sin(x);
  }
  return d;
}

}  // namespace

TEST_CASE("the gradient through 300 nested jits is the chain rule's product") {
  const Jaxpr f = testing::nested_jits(300, DType::f64);
  const VjpResult r = vjp_jaxpr(f);
  const ShapedArray aval(DType::f64, {3});
  const std::vector<runtime::Buffer> x = {runtime::Buffer::full(aval, 0.5)};
  std::vector<runtime::Buffer> fwd = runtime::eval_jaxpr(r.fwd, x);
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(runtime::Buffer::full(ShapedArray(DType::f64, {}), 1.0));
  const std::vector<double> g = runtime::eval_jaxpr(r.bwd, bwd_in)[0].to_doubles();
  for (double gi : g) CHECK(gi == Approx(chain_derivative(0.5, 301)).epsilon(1e-12));
}

TEST_CASE("the gradient through 40 nested scans is the chain rule's product") {
  auto f = [](const Array& x) { return testing::nested_scans(x, 40); };
  CHECK(grad(f)(Array::scalar(0.5, DType::f64)).item() ==
        Approx(chain_derivative(0.5, 41)).epsilon(1e-12));
}

TEST_CASE("the memory model of 40 nested scans of length 2 simulates each body once") {
  // The innermost body runs 2^40 times: a model that simulated two iterations of every scan
  // would walk it 2^40 times too, and this test would time out.
  const Jaxpr j = make_jaxpr([](const Array& x) {
    return numpy::sum(testing::nested_scans(x, 40, 2));
  })(ShapeDtype{DType::f32, {3}});
  const memory::StepModel m = memory::model_vjp(j);
  // The innermost sin's residual is stacked over every level: 2^40 iterations of f32[3].
  CHECK(m.residual_bytes >= (size_t{12} << 40));
  CHECK(m.peak_bytes >= m.residual_bytes);
}
