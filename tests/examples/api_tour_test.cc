// The API tour quoted in docs/autodiff.md computes what the doc says.
#include <catch2/catch.hpp>

#include <cmath>

#include "examples/api_tour.h"

TEST_CASE("the documented API tour computes sin(sin(x)) derivatives and f3's residuals") {
  auto t = cjax::examples::run_api_tour();
  double x = 2.0, s = std::sin(x), c = std::cos(x), cs = std::cos(s);
  CHECK(t.value == Approx(std::sin(s)).epsilon(1e-6));
  CHECK(t.grad == Approx(cs * c).epsilon(1e-5));  // -0.2556391
  CHECK(t.tangent == Approx(cs * c).epsilon(1e-5));
  // d/dx [cos(sin x) cos x] = -sin(sin x) cos^2 x - cos(sin x) sin x
  CHECK(t.hessian == Approx(-std::sin(s) * c * c - cs * s).epsilon(1e-4));
  CHECK(t.grad_jaxpr.find("sin") != std::string::npos);
  CHECK(t.grad_jaxpr.find("1.0:f32[]") != std::string::npos);
  CHECK(t.residuals.find("f32[5] output of dot_general from examples/api_tour.cc:") !=
        std::string::npos);
  CHECK(t.residuals.rfind("f32[5,4] from the argument W1\n", 0) == 0);
}
