// Dropout under remat: the computation-block MLP with dropout(0.1) after the GELU, the block
// inside checkpoint. The mask comes from a PRNG key, so the backward pass recomputes it from the
// key instead of saving it (JAX saves it under everything_saveable; jax#17982).
#include <vector>

#include "cjax/api.h"
#include "examples/inputs.h"
#include "examples/registry.h"

namespace cjax::examples {
namespace {
namespace np = cjax::numpy;

constexpr double kDropoutRate = 0.1;

Array dropout_block(const Array& x, const Array& W1, const Array& W2, const Array& key) {
  const Array h = nn::gelu(np::matmul(x, W1));
  return np::matmul(nn::dropout(key, kDropoutRate, h), W2);
}

Array dropout_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets,
                   const Array& key) {
  const Array out = cjax::checkpoint(dropout_block)(x, W1, W2, key);
  return np::mean(np::power(out - targets, 2));
}

}  // namespace

void register_random_examples(std::vector<Example>& out) {
  out.push_back({"random/dropout_mlp",
                 "block/mlp with dropout(0.1) after the GELU, the block in checkpoint: the mask is "
                 "recomputed from the key, never saved",
                 [] {
                   ShapeDtype x{DType::f32, {64, 512}}, w1{DType::f32, {512, 8192}},
                       w2{DType::f32, {8192, 512}}, t{DType::f32, {64, 512}},
                       key{DType::key_fry, {}};
                   return cjax::make_jaxpr(dropout_loss, {"x", "W1", "W2", "targets", "key"},
                                           "loss")(x, w1, w2, t, key);
                 },
                 [] {
                   std::vector<runtime::Buffer> in = mlp_block_inputs();
                   // random::key(0): both of the key's words are zero.
                   in.push_back(runtime::Buffer::zeros(ShapedArray(DType::key_fry, {})));
                   return in;
                 }});
}

}  // namespace cjax::examples
