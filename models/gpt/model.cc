#include "models/gpt/model.h"

#include <fmt/format.h>

#include <cmath>
#include <tuple>
#include <utility>

#include "ir/errors.h"

namespace cjax::models::gpt {
namespace {

namespace jnp = cjax::numpy;

bool dropping(const GptConfig& c, bool training) {
  return training && c.dropout > 0.0;
}

// Residual dropout: a no-op outside training or at rate 0, so that those programs draw no bits.
Array dropout(const GptConfig& c, bool training, const Array& key, const Array& x) {
  return dropping(c, training) ? nn::dropout(key, c.dropout, x) : x;
}

// Two keys from one, when dropout draws any (else the unused key twice).
std::pair<Array, Array> split_key(const GptConfig& c, bool training, const Array& key) {
  if (!dropping(c, training)) return {key, key};
  Array keys = random::split(key);
  return {keys[0], keys[1]};
}

Array attention(const GptConfig& c, const Block& w, const Array& x) {
  const int64_t B = x.shape()[0], T = x.shape()[1];
  Array qkv = jnp::matmul(x, w.w_qkv) + w.b_qkv;                    // [B, T, 3D]
  Array heads = jnp::reshape(qkv, {B, T, 3, c.heads, c.d_head()});  // [B, T, 3, H, Dh]
  Array q = heads[{all, all, 0}];                                   // [B, T, H, Dh]
  Array k = heads[{all, all, 1}];
  Array v = heads[{all, all, 2}];
  Array o = nn::dot_product_attention(q, k, v, std::nullopt, std::nullopt, std::nullopt,
                                      /*is_causal=*/true);
  return jnp::matmul(jnp::reshape(o, {B, T, c.d_model}), w.w_out) + w.b_out;
}

Array mlp(const Block& w, const Array& x) {
  Array h = nn::gelu(jnp::matmul(x, w.w_fc) + w.b_fc);
  return jnp::matmul(h, w.w_proj) + w.b_proj;
}

// Under FSDP, the whole weight from this process's block of it (split along its last dimension);
// else the weight itself.
Array gathered(const GptConfig& c, const Array& w) {
  if (c.fsdp_axis.empty()) return w;
  return checkpoint_name(lax::all_gather(w, c.fsdp_axis, w.ndim() - 1, /*tiled=*/true),
                         "fsdp_gathered");
}

// One pre-LayerNorm block: x + attention(ln(x)), then + mlp(ln(·)), each with residual dropout.
// Under FSDP its weights are gathered here, inside the checkpointed block, so that its policy
// decides whether the backward pass gathers them again.
Array block(const GptConfig& c, bool training, const Array& x, const Block& blocks,
            const Array& key) {
  const Block w = tree_map([&c](const Array& a) { return gathered(c, a); }, blocks);
  auto [attention_key, mlp_key] = split_key(c, training, key);
  Array h = nn::layer_norm(x, w.ln1_scale, w.ln1_bias);
  Array x1 = x + dropout(c, training, attention_key, attention(c, w, h));
  Array h1 = nn::layer_norm(x1, w.ln2_scale, w.ln2_bias);
  return x1 + dropout(c, training, mlp_key, mlp(w, h1));
}

// The blocks run by scan over their stacked weights (and, with dropout, one key per layer), the
// block checkpointed with the config's policy.
Array run_blocks(const GptConfig& c, const GptParams& p, const Array& x, const Array& key,
                 bool training) {
  auto run = [&](auto&& blk) {
    if (!dropping(c, training)) {
      auto body = [&](const Array& h, const Block& w) {
        return std::pair{blk(h, w, key), std::tuple<>{}};
      };
      return scan(body, x, p.blocks).first;
    }
    auto body = [&](const Array& h, const std::pair<Block, Array>& wk) {
      return std::pair{blk(h, wk.first, wk.second), std::tuple<>{}};
    };
    return scan(body, x, std::pair{p.blocks, random::split(key, c.layers)}).first;
  };
  auto plain = [&c, training](const Array& h, const Block& w, const Array& k) {
    return block(c, training, h, w, k);
  };
  if (c.policy == "none") return run(plain);
  PolicyRef policy = policies::by_name(c.policy);
  if (!c.fsdp_axis.empty() && c.save_gathered)
    policy = policies::save_from_both_policies(policy,
                                               policies::save_only_these_names({"fsdp_gathered"}));
  return run(checkpoint(plain, policy, /*prevent_cse=*/false));
}

}  // namespace

void GptConfig::check() const {
  auto positive = [](const char* name, int64_t v) {
    if (v <= 0) throw UsageError(fmt::format("gpt: {} must be positive, got {}", name, v));
  };
  positive("vocab", vocab);
  positive("d_model", d_model);
  positive("heads", heads);
  positive("seq", seq);
  positive("layers", layers);
  if (d_model % heads != 0)
    throw UsageError(fmt::format("gpt: d_model {} is not a multiple of heads {}", d_model, heads));
  if (!(dropout >= 0.0 && dropout < 1.0))
    throw UsageError(fmt::format("gpt: dropout must be in [0, 1), got {}", dropout));
  if (policy != "none") (void)policies::by_name(policy);  // names the valid ones when unknown
}

GptParams init_gpt(const GptConfig& c, const Array& key) {
  c.check();
  const int64_t L = c.layers, D = c.d_model, F = c.d_mlp();
  Array keys = random::split(key, 6);
  auto weights = nn::initializers::normal(0.02);
  auto residual = nn::initializers::normal(0.02 / std::sqrt(2.0 * double(L)));
  GptParams p;
  p.wte = weights(keys[0], {c.vocab, D}, DType::f32);
  p.wpe = weights(keys[1], {c.seq, D}, DType::f32);
  p.blocks.ln1_scale = jnp::ones({L, D});
  p.blocks.ln1_bias = jnp::zeros({L, D});
  p.blocks.w_qkv = weights(keys[2], {L, D, 3 * D}, DType::f32);
  p.blocks.b_qkv = jnp::zeros({L, 3 * D});
  p.blocks.w_out = residual(keys[3], {L, D, D}, DType::f32);
  p.blocks.b_out = jnp::zeros({L, D});
  p.blocks.ln2_scale = jnp::ones({L, D});
  p.blocks.ln2_bias = jnp::zeros({L, D});
  p.blocks.w_fc = weights(keys[4], {L, D, F}, DType::f32);
  p.blocks.b_fc = jnp::zeros({L, F});
  p.blocks.w_proj = residual(keys[5], {L, F, D}, DType::f32);
  p.blocks.b_proj = jnp::zeros({L, D});
  p.lnf_scale = jnp::ones({D});
  p.lnf_bias = jnp::zeros({D});
  return p;
}

Array gpt_logits(const GptConfig& c, const GptParams& p, const Array& tokens,
                 const Array& dropout_key, bool training) {
  if (tokens.ndim() != 2 || tokens.shape()[1] > c.seq || !is_integer(tokens.dtype()))
    throw UsageError(fmt::format("gpt: tokens must be integers [batch, T] with T <= {}, got {}",
                                 c.seq, tokens.aval().str_short()));
  const int64_t T = tokens.shape()[1];
  auto [embed_key, blocks_key] = split_key(c, training, dropout_key);
  const Array wte = gathered(c, p.wte);
  Array x = wte[tokens] + gathered(c, p.wpe)[{slice(0, T)}];  // [B, T, D]
  x = dropout(c, training, embed_key, x);
  x = run_blocks(c, p, x, blocks_key, training);
  x = nn::layer_norm(x, gathered(c, p.lnf_scale), gathered(c, p.lnf_bias));
  return jnp::einsum("btd,vd->btv", {x, wte});  // the output layer tied to the embedding
}

Array gpt_loss(const GptConfig& c, const GptParams& p, const Array& tokens, const Array& labels,
               const Array& dropout_key, bool training) {
  Array log_probs = nn::log_softmax(gpt_logits(c, p, tokens, dropout_key, training));
  Array picked = jnp::take_along_axis(log_probs, labels[{all, all, newaxis}], -1);
  return -jnp::mean(picked);
}

int64_t parameter_count(const GptParams& p) {
  int64_t n = 0;
  for (const Array& leaf : tree_leaves(p)) n += leaf.size();
  return n;
}

}  // namespace cjax::models::gpt
