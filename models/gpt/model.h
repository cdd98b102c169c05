// models/gpt: a character-level GPT in cjax, written as its JAX would be. Token and position
// embeddings, pre-LayerNorm blocks (causal multi-head attention, a GELU MLP) stacked along a
// leading axis and run by `scan` over a checkpointed block, a final LayerNorm and an output layer
// tied to the token embedding; dropout from PRNG keys split per layer.
#pragma once

#include <cstdint>
#include <string>

#include "cjax/api.h"

namespace cjax::models::gpt {

struct GptConfig {
  int64_t vocab = 96;
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t seq = 64;
  int64_t layers = 4;
  double dropout = 0.0;
  // The block's checkpoint policy, by name (policies::by_name); "none": not checkpointed.
  std::string policy = "dots_with_no_batch_dims_saveable";
  // FSDP (models/gpt/sharded.h): inside shard_map over a mesh axis of this name, every weight is
  // this process's block of it along its last dimension, gathered (lax::all_gather, named
  // "fsdp_gathered" by checkpoint_name) where it is used. Empty: the weights are whole.
  std::string fsdp_axis;
  // Under FSDP with a checkpointed block: whether the block saves its gathered weights for the
  // backward pass (the policy combined with save_only_these_names("fsdp_gathered")) instead of
  // gathering them again there.
  bool save_gathered = false;

  int64_t d_head() const { return d_model / heads; }
  int64_t d_mlp() const { return 4 * d_model; }
  // Throws cjax::UsageError naming the first field out of range.
  void check() const;
};

// One block's weights; GptParams holds them stacked along a leading axis of length `layers`.
struct Block {
  Array ln1_scale, ln1_bias;
  Array w_qkv, b_qkv;  // [D, 3D], [3D]: the query, key and value projections side by side
  Array w_out, b_out;  // [D, D], [D]
  Array ln2_scale, ln2_bias;
  Array w_fc, b_fc;      // [D, 4D], [4D]
  Array w_proj, b_proj;  // [4D, D], [D]
};
CJAX_PYTREE(Block, ln1_scale, ln1_bias, w_qkv, b_qkv, w_out, b_out, ln2_scale, ln2_bias, w_fc, b_fc,
            w_proj, b_proj)

struct GptParams {
  Array wte;  // [vocab, D], also the output layer
  Array wpe;  // [seq, D]
  Block blocks;
  Array lnf_scale, lnf_bias;
};
CJAX_PYTREE(GptParams, wte, wpe, blocks, lnf_scale, lnf_bias)

// GPT-2's initialisation: weights N(0, 0.02²), the residual projections N(0, (0.02/√(2L))²),
// biases zero, LayerNorm scales one; drawn from `key` (random::PRNGKey).
GptParams init_gpt(const GptConfig& config, const Array& key);

// The logits f32[B, T, vocab] for tokens i32[B, T] (T <= config.seq). `dropout_key` is used only
// when `training` and config.dropout > 0.
Array gpt_logits(const GptConfig& config, const GptParams& params, const Array& tokens,
                 const Array& dropout_key, bool training);

// The mean next-token cross-entropy, in nats, of `labels` i32[B, T] given `tokens` i32[B, T].
Array gpt_loss(const GptConfig& config, const GptParams& params, const Array& tokens,
               const Array& labels, const Array& dropout_key, bool training = true);

// gpt_loss in training mode as a function of (params, tokens, labels, dropout key), the form
// grad, value_and_grad and print_saved_residuals take.
inline auto training_loss(const GptConfig& config) {
  return [config](const GptParams& p, const Array& tokens, const Array& labels,
                  const Array& dropout_key) {
    return gpt_loss(config, p, tokens, labels, dropout_key);
  };
}

// The number of weights.
int64_t parameter_count(const GptParams& params);

}  // namespace cjax::models::gpt
