// Batching: per-example gradients of a logistic loss, vmap(grad(loss, argnums (0, 1))) over the
// examples of a batch (JAX's "per-example gradients" recipe).
#include <cstdint>
#include <tuple>

#include "cjax/api.h"
#include "examples/registry.h"

namespace cjax::examples {
namespace {
namespace np = cjax::numpy;

constexpr int64_t kFeatures = 16, kBatch = 32;

// One example's loss: log(1 + exp(-y (x . w + b))), y = +-1.
Array logistic_loss(const Array& w, const Array& b, const Array& x, const Array& y) {
  const Array neg_y = -y;  // computed first, as Python evaluates `-y * (...)`
  return np::log(1.0 + np::exp(neg_y * (np::dot(x, w) + b)));
}

// (dw f32[32,16], db f32[32]): each example's gradient, w and b shared.
std::tuple<Array, Array> per_example_grads(const Array& w, const Array& b, const Array& X,
                                           const Array& Y) {
  auto grads = vmap(grad(logistic_loss, argnums<0, 1>), {std::nullopt, std::nullopt, 0, 0});
  return grads(w, b, X, Y);
}

runtime::Buffer ramp(const Shape& shape, double scale, double offset) {
  ShapedArray aval(DType::f32, shape);
  std::vector<float> v(static_cast<size_t>(aval.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(double(i) * scale + offset);
  return runtime::Buffer::from_data<float>(aval, v);
}

// The inputs scripts/jax_oracle.py gave JAX: ramps, and labels +1 at every third example.
std::vector<runtime::Buffer> per_example_inputs() {
  std::vector<float> labels(kBatch);
  for (int64_t i = 0; i < kBatch; ++i) labels[size_t(i)] = i % 3 == 0 ? 1.0f : -1.0f;
  return {ramp({kFeatures}, 0.01, 0.0), ramp({}, 0.0, 0.1), ramp({kBatch, kFeatures}, 0.003, -0.7),
          runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {kBatch}), labels)};
}

}  // namespace

void register_vmap_examples(std::vector<Example>& out) {
  out.push_back({"vmap/per_example_grads",
                 "vmap(grad(log(1 + exp(-y (x.w + b))), argnums (0,1)), in_axes (None, None, 0, "
                 "0)): per-example dw f32[32,16], db f32[32]",
                 [] {
                   ShapeDtype w{DType::f32, {kFeatures}}, b{DType::f32, {}},
                       X{DType::f32, {kBatch, kFeatures}}, Y{DType::f32, {kBatch}};
                   return cjax::make_jaxpr(per_example_grads, {"w", "b", "X", "Y"},
                                           "per_example_grads")(w, b, X, Y);
                 },
                 per_example_inputs});
}

}  // namespace cjax::examples
