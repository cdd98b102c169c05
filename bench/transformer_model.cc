#include "bench/transformer_model.h"

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace cjax::bench {
namespace {

namespace np = cjax::numpy;

Array layer_norm(const Array& x, const Array& g, const Array& b) {
  Array centred = x - np::mean(x, -1, /*keepdims=*/true);
  Array var = np::mean(centred * centred, -1, true);
  return centred * np::rsqrt(var + 1e-5) * g + b;
}

// As jax.nn.log_softmax: the row maximum is a constant of the derivative.
Array log_softmax(const Array& x) {
  Array shifted = x - lax::stop_gradient(np::max(x, -1, true));
  return shifted - np::log(np::sum(np::exp(shifted), -1, true));
}

Array softmax(const Array& x) {
  Array e = np::exp(x - lax::stop_gradient(np::max(x, -1, true)));
  return e / np::sum(e, -1, true);
}

Array one_hot(const Array& ids, int64_t n) {
  return np::astype(np::equal(np::expand_dims(ids, {-1}), np::arange(n)), DType::f32);
}

// One layer's weights (the stacked weights without their leading axis).
Array attention(const TransformerSize& s, const Array& h, const Array& w_qkv, const Array& w_o) {
  const int64_t dh = s.d_model / s.heads;
  Array qkv = np::matmul(h, w_qkv);  // [B,T,3D]
  auto heads = [&](int64_t k) {      // [B,H,T,Dh]
    Array part = qkv[{ellipsis, slice(k * s.d_model, (k + 1) * s.d_model)}];
    return np::transpose(np::reshape(part, {s.batch, s.seq, s.heads, dh}),
                         std::vector<int64_t>{0, 2, 1, 3});
  };
  Array q = heads(0), k = heads(1), v = heads(2);
  Array scores = np::matmul(q, np::swapaxes(k, -1, -2)) / std::sqrt(double(dh));
  Array causal = lax::broadcasted_iota(DType::i32, {s.seq, s.seq}, 0) >=
                 lax::broadcasted_iota(DType::i32, {s.seq, s.seq}, 1);
  Array p = softmax(np::where(causal, scores, -1e9));
  Array o = np::transpose(np::matmul(p, v), std::vector<int64_t>{0, 2, 1, 3});
  return np::matmul(np::reshape(o, {s.batch, s.seq, s.d_model}), w_o);
}

Array block(const TransformerSize& s, const Array& x, const LayerWeights& w) {
  Array x1 = x + attention(s, layer_norm(x, w.ln1_g, w.ln1_b), w.w_qkv, w.w_o);
  Array hidden = nn::gelu(np::matmul(layer_norm(x1, w.ln2_g, w.ln2_b), w.w_1) + w.b_1);
  return x1 + np::matmul(hidden, w.w_2) + w.b_2;
}

Array normal(std::mt19937& gen, const Shape& shape, double scale) {
  std::normal_distribution<float> draw(0.f, 1.f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = static_cast<float>(draw(gen) * scale);
  return array(v, shape);
}

}  // namespace

TransformerParams init_transformer(const TransformerSize& s, uint32_t seed) {
  std::mt19937 gen(seed);
  const int64_t L = s.layers, D = s.d_model, F = s.d_mlp();
  const double in_d = 1.0 / std::sqrt(double(D)), in_f = 1.0 / std::sqrt(double(F));
  TransformerParams p;
  p.tok_emb = normal(gen, {s.vocab, D}, 0.2);
  p.pos_emb = normal(gen, {s.seq, D}, 0.2);
  p.layers.ln1_g = np::ones({L, D});
  p.layers.ln1_b = np::zeros({L, D});
  p.layers.w_qkv = normal(gen, {L, D, 3 * D}, in_d);
  p.layers.w_o = normal(gen, {L, D, D}, in_d);
  p.layers.ln2_g = np::ones({L, D});
  p.layers.ln2_b = np::zeros({L, D});
  p.layers.w_1 = normal(gen, {L, D, F}, in_d);
  p.layers.b_1 = np::zeros({L, F});
  p.layers.w_2 = normal(gen, {L, F, D}, in_f);
  p.layers.b_2 = np::zeros({L, D});
  p.lnf_g = np::ones({D});
  p.lnf_b = np::zeros({D});
  p.w_out = normal(gen, {D, s.vocab}, in_d);
  return p;
}

Array random_tokens(const TransformerSize& s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<int32_t> v(static_cast<size_t>(s.batch * s.seq));
  for (int32_t& t : v) t = static_cast<int32_t>(gen() % static_cast<uint32_t>(s.vocab));
  return array(v, Shape{s.batch, s.seq});
}

Array transformer_loss(const TransformerSize& s, const TransformerParams& p, const Array& tokens,
                       const Array& labels) {
  Array x = np::matmul(one_hot(tokens, s.vocab), p.tok_emb) + p.pos_emb;  // [B,T,D]
  auto layer = [&s](const Array& carry, const LayerWeights& w) {
    return std::pair{block(s, carry, w), std::tuple<>{}};
  };
  x = scan(layer, x, p.layers).first;
  Array logits = np::matmul(layer_norm(x, p.lnf_g, p.lnf_b), p.w_out);  // [B,T,V]
  return -np::mean(np::sum(one_hot(labels, s.vocab) * log_softmax(logits), -1));
}

}  // namespace cjax::bench
