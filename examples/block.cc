// The "checkpointing a computation block" article's MLP block: loss = mean((gelu(x @ W1) @ W2 -
// targets) ** 2) with x f32[64,512], W1 f32[512,8192], W2 f32[8192,512], targets f32[64,512].
#include <cmath>

#include "compiler/cjax.h"
#include "examples/registry.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;

Array mlp_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets) {
  Array h = nn::gelu(np::matmul(x, W1));
  Array out = np::matmul(h, W2);
  return np::mean(np::power(out - targets, 2));
}

// Deterministic inputs in [-scale, scale): a small LCG, so runs are reproducible.
runtime::Buffer filled(const Shape& shape, uint64_t seed, double scale) {
  ShapedArray aval(DType::f32, shape);
  std::vector<float> data(static_cast<size_t>(aval.size()));
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float& v : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(scale * ((state >> 11) * 0x1.0p-53 * 2.0 - 1.0));
  }
  return runtime::Buffer::from_data<float>(aval, data);
}

}  // namespace

void register_block_examples(std::vector<Example>& out) {
  out.push_back({"block/mlp",
                 "mean((gelu(x @ W1) @ W2 - targets)**2), x f32[64,512], W1 f32[512,8192], "
                 "W2 f32[8192,512]",
                 [] {
                   ShapeDtype x{DType::f32, {64, 512}}, w1{DType::f32, {512, 8192}},
                       w2{DType::f32, {8192, 512}}, t{DType::f32, {64, 512}};
                   return cjax::make_jaxpr(mlp_loss, {"x", "W1", "W2", "targets"}, "loss")(x, w1, w2, t);
                 },
                 [] {
                   return std::vector<runtime::Buffer>{
                       filled({64, 512}, 1, 1.0), filled({512, 8192}, 2, 1.0 / std::sqrt(512.0)),
                       filled({8192, 512}, 3, 1.0 / std::sqrt(8192.0)), filled({64, 512}, 4, 1.0)};
                 }});
}

}  // namespace cjax::examples
