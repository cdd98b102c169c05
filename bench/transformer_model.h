// A pre-LayerNorm causal transformer language model, the workload of the jit benchmarks: token and
// position embeddings, L layers run by scan over stacked weights (attention with H heads, a GELU
// MLP), a final LayerNorm and the next-token cross-entropy. Two sizes, as issue 20 names them.
#pragma once

#include <cstdint>
#include <string>

#include "cjax/api.h"

namespace cjax::bench {

struct TransformerSize {
  std::string name;
  int64_t vocab, d_model, seq, batch, heads, layers;
  int64_t d_mlp() const { return 4 * d_model; }
};

inline const TransformerSize kSmall{"small", 64, 32, 16, 4, 2, 2};
inline const TransformerSize kLarger{"larger", 512, 256, 128, 16, 4, 4};

// Each per-layer weight is stacked along a leading axis of length `layers`.
struct LayerWeights {
  Array ln1_g, ln1_b, w_qkv, w_o, ln2_g, ln2_b, w_1, b_1, w_2, b_2;
};

struct TransformerParams {
  Array tok_emb, pos_emb;
  LayerWeights layers;
  Array lnf_g, lnf_b, w_out;
};

CJAX_PYTREE(LayerWeights, ln1_g, ln1_b, w_qkv, w_o, ln2_g, ln2_b, w_1, b_1, w_2, b_2)
CJAX_PYTREE(TransformerParams, tok_emb, pos_emb, layers, lnf_g, lnf_b, w_out)

// Deterministic weights (a fixed-seed normal draw, scaled by 1/sqrt(fan-in)).
TransformerParams init_transformer(const TransformerSize& s, uint32_t seed);
// i32[batch, seq] tokens in [0, vocab).
Array random_tokens(const TransformerSize& s, uint32_t seed);

// The mean next-token cross-entropy of `labels` given `tokens` (both i32[batch, seq]).
Array transformer_loss(const TransformerSize& s, const TransformerParams& p, const Array& tokens,
                       const Array& labels);

}  // namespace cjax::bench
