// The "checkpointing a computation block" article's MLP block: loss = mean((gelu(x @ W1) @ W2 -
// targets) ** 2) with x f32[64,512], W1 f32[512,8192], W2 f32[8192,512], targets f32[64,512].
#include "compiler/cjax.h"
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

namespace {}  // namespace

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
}

}  // namespace cjax::examples
