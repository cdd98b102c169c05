#include "examples/api_tour.h"

#include <sstream>

#include "cjax/api.h"
#include "passes/policies.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;

cjax::Array sin_sin(const cjax::Array& x) {
  return np::sin(np::sin(x));
}

cjax::Array g(const cjax::Array& W, const cjax::Array& x) {
  return np::sin(np::dot(W, x));
}

cjax::Array f(const cjax::Array& W1, const cjax::Array& W2, const cjax::Array& W3,
              const cjax::Array& x) {
  return g(W3, g(W2, g(W1, x)));
}

}  // namespace

ApiTour run_api_tour() {
  ApiTour tour;
  // value_and_grad, hessian and jvp evaluate on concrete Arrays ...
  auto [value, grad] = cjax::value_and_grad(sin_sin)(cjax::Array(2.0));
  cjax::Array hess = cjax::hessian(sin_sin)(cjax::Array(2.0));
  auto [out, tangent] = cjax::jvp(sin_sin, cjax::Array(2.0), cjax::Array(1.0));
  // ... and stage into a jaxpr when traced: make_jaxpr(grad(f)) prints like JAX's.
  cjax::Jaxpr grad_jaxpr = cjax::make_jaxpr(cjax::grad(sin_sin))(cjax::Array(2.0));

  // What grad saves, for f checkpointed with a policy (the tutorial's f3).
  cjax::Array W1 = np::ones({5, 4}), W2 = np::ones({6, 5}), W3 = np::ones({7, 6}),
              x = np::ones({4});
  auto f3 = cjax::checkpoint(f, cjax::policies::dots_with_no_batch_dims_saveable());
  auto saved = cjax::saved_residuals(f3, {"W1", "W2", "W3", "x"})(W1, W2, W3, x);

  tour.value = value.item();
  tour.grad = grad.item();
  tour.hessian = hess.item();
  tour.tangent = tangent.item();
  (void)out;
  tour.grad_jaxpr = cjax::to_string(grad_jaxpr);
  for (const auto& r : saved) tour.residuals += r.aval.str_short() + " " + r.description + "\n";
  return tour;
}

}  // namespace cjax::examples
