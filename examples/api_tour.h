// A tour of the C++ API, compiled and tested (tests/examples/api_tour_test.cc) and quoted
// verbatim in docs/autodiff.md, so the documented code cannot rot.
#pragma once

#include <string>

namespace cjax::examples {

struct ApiTour {
  double value, grad, hessian, tangent;
  std::string grad_jaxpr;  // make_jaxpr(grad(sin∘sin))
  std::string residuals;   // print_saved_residuals of the checkpointed tutorial f
};

ApiTour run_api_tour();

}  // namespace cjax::examples
