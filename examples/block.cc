// The "checkpointing a computation block" article's MLP block: loss = mean((gelu(x @ W1) @ W2 -
// targets) ** 2) with x f32[64,512], W1 f32[512,8192], W2 f32[8192,512], targets f32[64,512].
// And a deep MLP for the memory tools: 64 layers h = tanh(h @ W_i + b_i).
#include <cmath>
#include <tuple>

#include "cjax/api.h"
#include "examples/inputs.h"
#include "examples/registry.h"
#include "examples/tutorial_programs.h"

namespace cjax::examples {
namespace {
namespace np = cjax::numpy;
}  // namespace

Array mlp_block(const Array& x, const Array& W1, const Array& W2) {
  Array h = nn::gelu(np::matmul(x, W1));
  return np::matmul(h, W2);
}

Array mlp_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets) {
  Array out = mlp_block(x, W1, W2);
  return np::mean(np::power(out - targets, 2));
}

// The article's point: the block under one checkpoint, recomputed in the backward pass.
Array mlp_checkpoint_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets) {
  Array out = cjax::checkpoint(mlp_block)(x, W1, W2);
  return np::mean(np::power(out - targets, 2));
}

// A whole training step: the loss's value and gradient, then SGD, returning the updated weights
// and the loss (`cjax bench --step` times it as one program).
std::tuple<Array, Array, Array> mlp_sgd_step(const Array& x, const Array& W1, const Array& W2,
                                             const Array& targets) {
  auto [loss, grads] = value_and_grad(mlp_loss, argnums<1, 2>)(x, W1, W2, targets);
  auto [g1, g2] = grads;
  return {W1 - 0.01 * g1, W2 - 0.01 * g2, loss};
}

namespace {

constexpr int kDeepLayers = 64, kDeepWidth = 256, kDeepBatch = 256;

// 64 layers h = tanh(h @ W_i + b_i), width 256, batch 256; loss = mean(h²). Every layer's
// activations are residuals: the memory a budget trades against recomputation.
Array deep_mlp_loss(const std::vector<Array>& Ws, const std::vector<Array>& bs, const Array& x) {
  Array h = x;
  for (size_t i = 0; i < Ws.size(); ++i) h = np::tanh(np::matmul(h, Ws[i]) + bs[i]);
  return np::mean(h * h);
}

std::vector<runtime::Buffer> deep_mlp_inputs() {
  std::vector<runtime::Buffer> in;
  for (int i = 0; i < kDeepLayers; ++i)
    in.push_back(seeded({kDeepWidth, kDeepWidth}, 100 + static_cast<uint64_t>(i),
                        1.0 / std::sqrt(double{kDeepWidth})));
  for (int i = 0; i < kDeepLayers; ++i)
    in.push_back(seeded({kDeepWidth}, 200 + static_cast<uint64_t>(i), 0.1));
  in.push_back(seeded({kDeepBatch, kDeepWidth}, 300, 1.0));
  return in;
}

}  // namespace

void register_block_examples(std::vector<Example>& out) {
  out.push_back(
      {"block/mlp",
       "mean((gelu(x @ W1) @ W2 - targets)**2), x f32[64,512], W1 f32[512,8192], "
       "W2 f32[8192,512]",
       [] {
         ShapeDtype x{DType::f32, {64, 512}}, w1{DType::f32, {512, 8192}},
             w2{DType::f32, {8192, 512}}, t{DType::f32, {64, 512}};
         return cjax::make_jaxpr(mlp_loss, {"x", "W1", "W2", "targets"}, "loss")(x, w1, w2, t);
       },
       mlp_block_inputs});
  out.push_back({"block/mlp_sgd_step",
                 "block/mlp's training step as one program: value_and_grad, then W -= 0.01 * "
                 "grad; returns (W1, W2, loss)",
                 [] {
                   ShapeDtype x{DType::f32, {64, 512}}, w1{DType::f32, {512, 8192}},
                       w2{DType::f32, {8192, 512}}, t{DType::f32, {64, 512}};
                   return cjax::make_jaxpr(mlp_sgd_step, {"x", "W1", "W2", "targets"}, "sgd_step")(
                       x, w1, w2, t);
                 },
                 mlp_block_inputs});
  out.push_back({"block/mlp_deep",
                 "mean(h**2) after 64 layers h = tanh(h @ W_i + b_i), width 256, batch 256",
                 [] {
                   std::vector<Array> ws(kDeepLayers,
                                         Array(ShapeDtype{DType::f32, {kDeepWidth, kDeepWidth}})),
                       bs(kDeepLayers, Array(ShapeDtype{DType::f32, {kDeepWidth}}));
                   ShapeDtype x{DType::f32, {kDeepBatch, kDeepWidth}};
                   return cjax::make_jaxpr(deep_mlp_loss, {"W", "b", "x"}, "loss")(ws, bs, x);
                 },
                 deep_mlp_inputs});
}

}  // namespace cjax::examples
