// jnp.einsum and jnp.tensordot: the jaxprs jax 0.11.2 printed (tests/golden/jax_0_11_2/
// model_ops.md: opt_einsum's contraction order for three operands, the attention scores'
// batch dims) and values against a brute-force sum over every assignment of the labels.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace einsum_test {

namespace jnp = cjax::numpy;
using testing::f32;
using testing::random_f64;

std::string jax(const std::string& title) {
  return golden::jax_case("model_ops.md", title);
}

// The einsum by definition: for every assignment of the labels, the product of the operands'
// elements, added into the output's element. `spec` is explicit ("ij,jk->ik").
std::vector<double> brute_force(const std::string& spec, const std::vector<Array>& ops) {
  const size_t arrow = spec.find("->");
  std::vector<std::string> ins;
  for (size_t i = 0; i <= arrow;) {
    const size_t c = std::min(spec.find(',', i), arrow);
    ins.push_back(spec.substr(i, c - i));
    i = c + 1;
  }
  const std::string out = spec.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t k = 0; k < ins.size(); ++k)
    for (size_t d = 0; d < ins[k].size(); ++d) size[ins[k][d]] = ops[k].shape()[d];
  std::vector<char> labels;
  for (auto& [c, n] : size) labels.push_back(c);
  std::vector<std::vector<double>> values;
  for (const Array& a : ops) values.push_back(a.to_vector<double>());
  int64_t out_size = 1;
  for (char c : out) out_size *= size[c];
  std::vector<double> result(static_cast<size_t>(out_size), 0.0);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  while (true) {
    double p = 1;
    for (size_t k = 0; k < ins.size(); ++k) {
      int64_t flat = 0;
      for (char c : ins[k]) flat = flat * size[c] + at[c];
      p *= values[k][static_cast<size_t>(flat)];
    }
    int64_t flat = 0;
    for (char c : out) flat = flat * size[c] + at[c];
    result[static_cast<size_t>(flat)] += p;
    size_t d = labels.size();
    while (d > 0 && ++at[labels[d - 1]] == size[labels[d - 1]]) at[labels[--d]] = 0;
    if (d == 0) break;
  }
  return result;
}

void check_einsum(const std::string& spec, const std::string& explicit_spec,
                  const std::vector<Array>& ops) {
  INFO(spec);
  const std::vector<double> got = jnp::einsum(spec, ops).to_vector<double>();
  const std::vector<double> want = brute_force(explicit_spec, ops);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == Approx(want[i]).epsilon(1e-12).margin(1e-12));
}

TEST_CASE("einsum and tensordot print as JAX 0.11.2 printed them") {
  const ShapeDtype m23 = f32({2, 3}), m34 = f32({3, 4});
  auto two = [](const Array& a, const Array& b) { return jnp::einsum("ij,jk->ik", {a, b}); };
  CHECK(to_string(make_jaxpr(two)(m23, m34)) == jax("einsum 2 operands"));
  auto three = [](const Array& a, const Array& b, const Array& c) {
    return jnp::einsum("ij,jk,kl->il", {a, b, c});
  };
  CHECK(to_string(make_jaxpr(three)(m23, m34, f32({4, 2}))) == jax("einsum 3 operands"));
  auto scores = [](const Array& q, const Array& k) {
    return jnp::einsum("bhqd,bhkd->bhqk", {q, k});
  };
  CHECK(to_string(make_jaxpr(scores)(f32({2, 2, 3, 4}), f32({2, 2, 5, 4}))) ==
        jax("einsum attention"));
  auto dot1 = [](const Array& a, const Array& b) { return jnp::tensordot(a, b, 1); };
  CHECK(to_string(make_jaxpr(dot1)(m23, m34)) == jax("tensordot"));
}

TEST_CASE("einsum computes the sum over every assignment of its labels") {
  std::mt19937 rng(4);
  const Array a = random_f64(rng, {2, 3}), b = random_f64(rng, {3, 4}), c = random_f64(rng, {4, 2});
  const Array d = random_f64(rng, {2, 5});
  check_einsum("ij,jk->ik", "ij,jk->ik", {a, b});
  check_einsum("ij,jk", "ij,jk->ik", {a, b});  // implicit output
  check_einsum("ij,jk,kl->il", "ij,jk,kl->il", {a, b, c});
  check_einsum("ij,jk,kl,lm->im", "ij,jk,kl,lm->im", {a, b, c, d});
  check_einsum("ij,jk->ki", "ij,jk->ki", {a, b});  // a transpose after the product
  check_einsum("ij->ji", "ij->ji", {a});
  check_einsum("ij->", "ij->", {a});
  check_einsum("ij,ij->i", "ij,ij->i", {a, a});
  check_einsum("i,j->ij", "i,j->ij", {a[0], b[0]});  // outer product
  check_einsum("ij,kl->", "ij,kl->", {a, c});        // each side summed first
  const Array sq = random_f64(rng, {3, 3});
  check_einsum("ii->", "ii->", {sq});    // trace
  check_einsum("ii->i", "ii->i", {sq});  // diagonal
  const Array x = random_f64(rng, {2, 3, 4}), y = random_f64(rng, {2, 4, 5});
  check_einsum("bij,bjk->bik", "bij,bjk->bik", {x, y});
  check_einsum("...ij,...jk->...ik", "bij,bjk->bik", {x, y});
  check_einsum("bij,bjk->kbi", "bij,bjk->kbi", {x, y});
}

TEST_CASE("einsum refuses what it cannot do, by name") {
  const Array a = jnp::ones({2, 3});
  CHECK_THROWS_WITH(jnp::einsum("ij,jk->ik", {a}), Catch::Contains("einsum: 1 operands for 2"));
  CHECK_THROWS_WITH(jnp::einsum("ijk->i", {a}), Catch::Contains("has 2 dimensions"));
  CHECK_THROWS_WITH(jnp::einsum("ij,jk->ik", {a, jnp::ones({4, 2})}),
                    Catch::Contains("label 'j' has sizes 3 and 4"));
  CHECK_THROWS_WITH(jnp::einsum("ij->iz", {a}), Catch::Contains("output label 'z'"));
  CHECK_THROWS_WITH(jnp::einsum("ij,ij,ij,ij,ij->", {a, a, a, a, a}),
                    Catch::Contains("takes 1 to 4"));
  CHECK_THROWS_WITH(jnp::tensordot(a, a, 3), Catch::Contains("exceeds input ranks"));
}

TEST_CASE("einsum differentiates and vmaps like its dot_generals") {
  std::mt19937 rng(6);
  const Array q = random_f64(rng, {2, 3, 4}), k = random_f64(rng, {2, 5, 4});
  auto loss = [](const Array& x, const Array& y) {
    return jnp::sum(jnp::tanh(jnp::einsum("bqd,bkd->bqk", {x, y})));
  };
  auto by_matmul = [](const Array& x, const Array& y) {
    return jnp::sum(jnp::tanh(jnp::matmul(x, jnp::swapaxes(y, 1, 2))));
  };
  const std::vector<double> g1 = grad(loss)(q, k).to_vector<double>();
  const std::vector<double> g2 = grad(by_matmul)(q, k).to_vector<double>();
  for (size_t i = 0; i < g1.size(); ++i) CHECK(g1[i] == Approx(g2[i]).epsilon(1e-12));
  auto per_example = [](const Array& x, const Array& y) {
    return jnp::einsum("qd,kd->qk", {x, y});
  };
  const std::vector<double> batched = vmap(per_example)(q, k).to_vector<double>();
  const std::vector<double> direct = jnp::einsum("bqd,bkd->bqk", {q, k}).to_vector<double>();
  for (size_t i = 0; i < batched.size(); ++i) CHECK(batched[i] == Approx(direct[i]).epsilon(1e-12));
}

}  // namespace einsum_test
}  // namespace cjax
