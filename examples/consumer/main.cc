// Traces the model, differentiates it and prints what its backward pass saves.
#include <iostream>

#include "model.h"

int main() {
  cjax::ShapeDtype W1{cjax::DType::f32, {8, 4}}, W2{cjax::DType::f32, {2, 8}};
  cjax::ShapeDtype x{cjax::DType::f32, {4}}, y{cjax::DType::f32, {2}};
  std::vector<std::string> names = {"W1", "W2", "x", "y"};

  std::cout << "jaxpr:\n" << cjax::to_string(cjax::make_jaxpr(loss, names)(W1, W2, x, y)) << "\n";

  cjax::Array w1 = cjax::numpy::full({8, 4}, 0.1f), w2 = cjax::numpy::full({2, 8}, -0.2f);
  cjax::Array xv = cjax::numpy::ones({4}), yv = cjax::numpy::zeros({2});
  auto [value, g] = cjax::value_and_grad(loss, cjax::argnums<0, 1>)(w1, w2, xv, yv);
  auto [dW1, dW2] = g;
  std::cout << "loss: " << value.item() << "\n";
  std::cout << "dloss/dW2[0, 0]: " << dW2.to_vector<float>()[0] << "\n";
  std::cout << "dloss/dW1 shape: " << dW1.aval().str_short() << "\n";

  std::cout << "saved residuals:\n";
  cjax::print_saved_residuals(loss, names)(W1, W2, x, y);
}
