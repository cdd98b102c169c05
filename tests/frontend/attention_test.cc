// nn::dot_product_attention: the jaxpr and the values jax 0.11.2 printed for causal attention
// (tests/golden/jax_0_11_2/model_ops.md), and, against attention written out with einsum and
// softmax: padding masks, a bias, grouped-query heads, and gradients.
#include <catch2/catch.hpp>

#include <random>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace attention_test {

namespace jnp = cjax::numpy;

std::string jax(const std::string& title) {
  return golden::jax_case("model_ops.md", title);
}

// scripts/jax_oracle.py's ar(): arange * 0.1 + offset, f32.
Array ar(const Shape& shape, double offset = 0.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return jnp::reshape(jnp::arange(static_cast<double>(n)) * 0.1 + offset, shape).astype(DType::f32);
}

Array randoms(std::mt19937& rng, const Shape& shape) {
  return testing::random_f32(rng, shape);
}

// Attention by its definition, one head per query head (keys repeated for grouped heads).
Array by_hand(const Array& q, const Array& k, const Array& v, const Array& allowed) {
  const int64_t groups = q.shape()[2] / k.shape()[2];
  Array kk = k, vv = v;
  if (groups > 1) {
    kk = jnp::reshape(
        jnp::broadcast_to(k[{Slice{}, Slice{}, Slice{}, NewAxisIndex{}, Slice{}}],
                          {k.shape()[0], k.shape()[1], k.shape()[2], groups, k.shape()[3]}),
        {k.shape()[0], k.shape()[1], q.shape()[2], k.shape()[3]});
    vv = jnp::reshape(
        jnp::broadcast_to(v[{Slice{}, Slice{}, Slice{}, NewAxisIndex{}, Slice{}}],
                          {v.shape()[0], v.shape()[1], v.shape()[2], groups, v.shape()[3]}),
        {v.shape()[0], v.shape()[1], q.shape()[2], v.shape()[3]});
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape()[3]));
  const Array scores = jnp::einsum("btnh,bsnh->bnts", {q, kk}) * static_cast<float>(scale);
  const Array masked = jnp::where(allowed, scores, Array::scalar(-1e30, DType::f32));
  return jnp::einsum("bnts,bsnh->btnh", {nn::softmax(masked, -1), vv});
}

void check_close(const Array& got, const Array& want) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(w[i]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("causal dot_product_attention prints and computes as JAX 0.11.2's") {
  const ShapeDtype s{DType::f32, {2, 5, 2, 4}};
  auto causal = [](const Array& q, const Array& k, const Array& v) {
    return nn::dot_product_attention(q, k, v, std::nullopt, std::nullopt, std::nullopt, true);
  };
  CHECK(to_string(make_jaxpr(causal)(s, s, s)) == jax("dot_product_attention causal"));
  const Array out = causal(ar({1, 3, 1, 2}), ar({1, 3, 1, 2}, 0.5), ar({1, 3, 1, 2}, -0.3));
  const std::vector<double> want = golden::numbers(jax("dot_product_attention values"));
  const std::vector<float> got = out.to_vector<float>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6));
}

TEST_CASE("attention with masks, a bias and grouped heads equals its definition") {
  std::mt19937 rng(21);
  const Array q = randoms(rng, {2, 4, 4, 3}), k = randoms(rng, {2, 6, 2, 3}),
              v = randoms(rng, {2, 6, 2, 3});
  // Padding: the last two keys of the second example are masked out.
  std::vector<bool> keep(2 * 6);
  for (int b = 0; b < 2; ++b)
    for (int s = 0; s < 6; ++s) keep[static_cast<size_t>(b * 6 + s)] = b == 0 || s < 4;
  const Array keys_ok = jnp::reshape(array(keep, Shape{12}), {2, 1, 1, 6});
  const Array mask = jnp::broadcast_to(keys_ok, {2, 4, 4, 6});
  check_close(nn::dot_product_attention(q, k, v, std::nullopt, keys_ok), by_hand(q, k, v, mask));
  // Causal with a padding mask (T = 4 queries over S = 6 keys: the lower triangle of [4, 6]).
  const Array tri = jnp::tril(jnp::ones({4, 6}, DType::bool_));
  const Array both = jnp::logical_and(mask, jnp::broadcast_to(tri, {2, 4, 4, 6}));
  check_close(nn::dot_product_attention(q, k, v, std::nullopt, keys_ok, std::nullopt, true),
              by_hand(q, k, v, both));
  // A bias adds to the scores; a scale replaces 1/sqrt(H).
  const Array bias = randoms(rng, {1, 4, 4, 6});
  const Array with_bias = nn::dot_product_attention(q * 2.0f, k, v, bias, std::nullopt, 0.5);
  auto biased_by_hand = [&] {
    const Array kk = jnp::reshape(
        jnp::broadcast_to(k[{Slice{}, Slice{}, Slice{}, NewAxisIndex{}, Slice{}}], {2, 6, 2, 2, 3}),
        {2, 6, 4, 3});
    const Array vv = jnp::reshape(
        jnp::broadcast_to(v[{Slice{}, Slice{}, Slice{}, NewAxisIndex{}, Slice{}}], {2, 6, 2, 2, 3}),
        {2, 6, 4, 3});
    const Array scores = jnp::einsum("btnh,bsnh->bnts", {q * 2.0f, kk}) * 0.5f + bias;
    return jnp::einsum("bnts,bsnh->btnh", {nn::softmax(scores, -1), vv});
  };
  check_close(with_bias, biased_by_hand());
  CHECK_THROWS_WITH(
      nn::dot_product_attention(q, randoms(rng, {2, 6, 3, 3}), randoms(rng, {2, 6, 3, 3})),
      Catch::Contains("K dividing N"));
}

TEST_CASE("attention's gradient equals that of its definition, and it compiles") {
  std::mt19937 rng(22);
  const Array q = randoms(rng, {1, 5, 2, 4}), k = randoms(rng, {1, 5, 2, 4}),
              v = randoms(rng, {1, 5, 2, 4});
  const Array tri = jnp::broadcast_to(jnp::tril(jnp::ones({5, 5}, DType::bool_)), {1, 2, 5, 5});
  auto loss = [](const Array& a, const Array& b, const Array& c) {
    return jnp::sum(jnp::tanh(
        nn::dot_product_attention(a, b, c, std::nullopt, std::nullopt, std::nullopt, true)));
  };
  auto loss_by_hand = [&](const Array& a, const Array& b, const Array& c) {
    return jnp::sum(jnp::tanh(by_hand(a, b, c, tri)));
  };
  auto g = grad(loss, argnums<0, 1, 2>)(q, k, v);
  auto h = grad(loss_by_hand, argnums<0, 1, 2>)(q, k, v);
  check_close(std::get<0>(g), std::get<0>(h));
  check_close(std::get<1>(g), std::get<1>(h));
  check_close(std::get<2>(g), std::get<2>(h));
  auto jg = jit(grad(loss, argnums<0, 1, 2>))(q, k, v);
  check_close(std::get<0>(jg), std::get<0>(g));
}

}  // namespace attention_test
}  // namespace cjax
