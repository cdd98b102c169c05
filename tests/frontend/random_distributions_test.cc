// cjax::random's samplers: the values jax 0.11.2 drew for fixed keys in both threefry modes
// (tests/golden/jax_0_11_2/random_bits.json), the distributions' moments and Kolmogorov-Smirnov
// statistics over 10^6 samples, and nn::dropout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include "cjax/api.h"
#include "tests/frontend/random_values.h"

namespace cjax {
namespace random_distributions_test {

namespace jnp = cjax::numpy;
using namespace random_values;

std::vector<float> floats(const Array& a) {
  const float* p = a.buffer().as<float>();
  return {p, p + a.size()};
}
std::vector<int32_t> ints(const Array& a) {
  const int32_t* p = a.buffer().as<int32_t>();
  return {p, p + a.size()};
}
std::vector<int32_t> jax_ints(const std::string& mode, const std::string& name) {
  std::vector<int32_t> out;
  for (uint32_t w : jax_words(mode, name)) out.push_back(int32_t(w));
  return out;
}
// Within a few ulps: XLA's erf_inv, log and fused multiply-adds differ in the last bits.
void check_close(const Array& got, const std::string& mode, const std::string& name) {
  const std::vector<uint32_t> want = jax_words(mode, name);
  const std::vector<float> have = floats(got);
  REQUIRE(have.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(have[i] == Approx(as_float(want[i])).epsilon(4e-6).margin(1e-7));
}

TEST_CASE("the samplers draw JAX's values in both threefry modes") {
  for (const bool partitionable : {true, false}) {
    ModeScope mode(partitionable);
    const std::string m = partitionable ? "partitionable" : "classic";
    INFO(m);
    const Array k0 = random::key(0), k42 = random::key(42);
    check_close(random::truncated_normal(k0, -1.0, 2.0, Shape{6}), m,
                "truncated_normal(key(0), -1, 2, (6,))");
    CHECK(bools(random::bernoulli(k0, 0.3, Shape{10})) ==
          jax_bools(m, "bernoulli(key(0), 0.3, (10,))"));
    CHECK(bools(random::bernoulli(k0, 0.9, Shape{4, 8})) ==
          jax_bools(m, "dropout mask bernoulli(key(0), 0.9, (4,8))"));
    CHECK(ints(random::randint(k0, {6}, 0, 10)) == jax_ints(m, "randint(key(0), (6,), 0, 10)"));
    CHECK(ints(random::randint(k42, {6}, -5, 1000)) ==
          jax_ints(m, "randint(key(42), (6,), -5, 1000)"));
    const Array logits = jnp::log(jnp::reshape(jnp::arange(1.0, 16.0), {3, 5}));
    CHECK(ints(random::categorical(k0, logits)) ==
          jax_ints(m, "categorical(key(0), logits (3,5))"));
    check_close(random::gumbel(k0, {5}), m, "gumbel(key(0), (5,))");
    CHECK(ints(random::permutation(k0, 10)) == jax_ints(m, "permutation(key(0), 10)"));
    CHECK(ints(random::permutation(k42, jnp::reshape(jnp::arange(12), {6, 2}))) ==
          jax_ints(m, "permutation(key(42), arange(6) 2d axis 0)"));
    CHECK(ints(random::choice(k0, 10, {4}, false)) ==
          jax_ints(m, "choice(key(0), 10, (4,), replace=False)"));
    CHECK(ints(random::choice(k0, 10, {4})) == jax_ints(m, "choice(key(0), 10, (4,))"));
    const Array p = cjax::array({0.1f, 0.2f, 0.3f, 0.25f, 0.15f});
    CHECK(ints(random::choice(k0, 5, {3}, true, p)) == jax_ints(m, "choice(key(0), 5, (3,), p)"));
  }
}

TEST_CASE("split(key, n)[i] is fold_in(key, i) in partitionable mode") {
  ModeScope mode(true);
  const Array k = random::key(7);
  const Array ks = random::key_data(random::split(k, 5));
  for (int i = 0; i < 5; ++i)
    CHECK(words(random::key_data(random::fold_in(k, i))) == words(jnp::getitem(ks, {int64_t(i)})));
}

constexpr int64_t kSamples = 1'000'000;
// The Kolmogorov-Smirnov statistic's 0.1% critical value for n samples (1.95 / sqrt(n)).
const double kKsBound = 1.95 / std::sqrt(double(kSamples));

// sup |F_n(x) - F(x)| of the samples against the cdf.
double ks_statistic(std::vector<float> xs, const std::function<double(double)>& cdf) {
  std::sort(xs.begin(), xs.end());
  const double n = double(xs.size());
  double d = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double f = cdf(xs[i]);
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  return d;
}
std::pair<double, double> mean_var(const std::vector<float>& xs) {
  double s = 0, s2 = 0;
  for (float x : xs) s += x;
  const double mean = s / double(xs.size());
  for (float x : xs) s2 += (x - mean) * (x - mean);
  return {mean, s2 / double(xs.size() - 1)};
}
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

TEST_CASE("the samplers' distributions over 10^6 samples: moments and KS statistics") {
  const Array k = random::key(2026);
  SECTION("uniform") {
    const std::vector<float> u = floats(random::uniform(k, {kSamples}));
    CHECK(*std::min_element(u.begin(), u.end()) >= 0.0f);
    CHECK(*std::max_element(u.begin(), u.end()) < 1.0f);
    CHECK(ks_statistic(u, [](double x) { return x; }) < kKsBound);
  }
  SECTION("normal") {
    const std::vector<float> z = floats(random::normal(k, {kSamples}));
    const auto [mean, var] = mean_var(z);
    CHECK(std::abs(mean) < 5.0 / std::sqrt(double(kSamples)));
    CHECK(var == Approx(1.0).margin(0.01));
    CHECK(ks_statistic(z, normal_cdf) < kKsBound);
  }
  SECTION("truncated_normal stays inside (lower, upper) with the truncated cdf") {
    const double lo = -1.0, hi = 2.0;
    const std::vector<float> t = floats(random::truncated_normal(k, lo, hi, Shape{kSamples}));
    CHECK(*std::min_element(t.begin(), t.end()) > float(lo));
    CHECK(*std::max_element(t.begin(), t.end()) < float(hi));
    const double a = normal_cdf(lo), z = normal_cdf(hi) - a;
    CHECK(ks_statistic(t, [&](double x) { return (normal_cdf(x) - a) / z; }) < kKsBound);
  }
  SECTION("gumbel: mean is Euler's constant, variance pi^2/6") {
    const std::vector<float> g = floats(random::gumbel(k, {kSamples}));
    const auto [mean, var] = mean_var(g);
    CHECK(mean == Approx(0.5772156649).margin(0.005));
    CHECK(var == Approx(M_PI * M_PI / 6.0).margin(0.01));
    CHECK(ks_statistic(g, [](double x) { return std::exp(-std::exp(-x)); }) < kKsBound);
  }
  SECTION("bernoulli's mean is p") {
    const std::vector<int> b = bools(random::bernoulli(k, 0.3, Shape{kSamples}));
    const double mean = double(std::accumulate(b.begin(), b.end(), 0)) / double(kSamples);
    CHECK(mean == Approx(0.3).margin(0.002));
  }
  SECTION("randint: each value of [-3, 7) about equally often") {
    const std::vector<int32_t> r = ints(random::randint(k, {kSamples}, -3, 7));
    std::vector<int64_t> counts(10, 0);
    int64_t outside = 0;
    for (int32_t v : r) {
      if (v < -3 || v >= 7)
        ++outside;
      else
        ++counts[size_t(v + 3)];
    }
    CHECK(outside == 0);
    for (int64_t c : counts) CHECK(double(c) / double(kSamples) == Approx(0.1).margin(0.002));
  }
  SECTION("categorical draws each category with its softmax probability") {
    const std::vector<float> w{1.0f, 2.0f, 3.0f, 4.0f};
    const Array logits = jnp::log(cjax::array(w));
    const std::vector<int32_t> c = ints(random::categorical(k, logits, -1, Shape{kSamples}));
    std::vector<int64_t> counts(4, 0);
    for (int32_t v : c) ++counts[size_t(v)];
    for (size_t i = 0; i < 4; ++i)
      CHECK(double(counts[i]) / double(kSamples) == Approx(w[i] / 10.0).margin(0.002));
  }
}

TEST_CASE("permutation, choice and categorical without replacement draw distinct values") {
  const Array k = random::key(5);
  std::vector<int32_t> perm = ints(random::permutation(k, 1000));
  std::sort(perm.begin(), perm.end());
  std::vector<int32_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  CHECK(perm == iota);
  const std::vector<int32_t> drawn = ints(random::choice(k, 50, {20}, false));
  CHECK(std::set<int32_t>(drawn.begin(), drawn.end()).size() == 20);
  const Array p = cjax::array({0.05f, 0.4f, 0.05f, 0.3f, 0.2f});
  const std::vector<int32_t> weighted = ints(random::choice(k, 5, {5}, false, p));
  CHECK(std::set<int32_t>(weighted.begin(), weighted.end()).size() == 5);
  // Each row of a categorical without replacement: the leading axis draws distinct categories.
  const Array logits = jnp::zeros({2, 6});
  const Array c = random::categorical(k, logits, -1, Shape{6, 2}, false);
  REQUIRE(c.shape() == Shape{6, 2});
  const std::vector<int32_t> cv = ints(c);
  for (int col = 0; col < 2; ++col) {
    std::set<int32_t> seen;
    for (int row = 0; row < 6; ++row) seen.insert(cv[size_t(row * 2 + col)]);
    CHECK(seen.size() == 6);
  }
  // Independent shuffles permute each row alone; a plain one moves whole rows.
  const Array grid = jnp::reshape(jnp::arange(12), {3, 4});
  const std::vector<int32_t> rows = ints(random::permutation(k, grid, 0));
  for (int r = 0; r < 3; ++r) CHECK(rows[size_t(r * 4 + 1)] == rows[size_t(r * 4)] + 1);
}

TEST_CASE("samplers refuse bad arguments with clear errors") {
  const Array k = random::key(0);
  CHECK_THROWS_WITH(random::bernoulli(k, 1), Catch::Contains("must have a floating dtype"));
  CHECK_THROWS_WITH(random::randint(k, {3}, 0, 5, DType::f32),
                    Catch::Contains("randint only accepts integer dtypes"));
  CHECK_THROWS_WITH(
      random::choice(k, 3, {5}, false),
      Catch::Contains("Cannot take a larger sample (size 5) than population (size 3)"));
  // Elements of an array, with replacement (or by `p`): JAX's jnp.take of the drawn indices.
  const Array pool = jnp::arange(10.0f, 14.0f);
  const Array idx = random::choice(k, 4, {6});
  const Array drawn = random::choice(k, pool, {6});
  CHECK(drawn.to_vector<float>() == (idx.astype(DType::f32) + 10.0f).to_vector<float>());
  const Array rows = jnp::reshape(jnp::arange(8.0f), {4, 2});
  CHECK(random::choice(k, rows, {3}, true, cjax::array({0.1f, 0.2f, 0.3f, 0.4f})).shape() ==
        Shape{3, 2});
  CHECK_THROWS_WITH(random::choice(k, 4, {2}, true, jnp::ones({3})),
                    Catch::Contains("p must be None or a 1D vector"));
  CHECK_THROWS_WITH(random::truncated_normal(k, -1.0, 1.0, Shape{2}, DType::i32),
                    Catch::Contains("must be a float dtype"));
  CHECK_THROWS_WITH(random::bernoulli(k, jnp::full({2, 3}, 0.5f), Shape{3}),
                    Catch::Contains("bernoulli parameter shapes must be broadcast-compatible"));
  CHECK_THROWS_WITH(nn::dropout(k, 1.5, jnp::ones({2})), Catch::Contains("rate must be in [0, 1]"));
}

TEST_CASE("nn::dropout keeps 1 - rate of the elements, scaled, and is an identity at rate 0") {
  const Array x = jnp::ones({100000});
  const std::vector<float> y = floats(nn::dropout(random::key(1), 0.25, x));
  int64_t kept = 0;
  for (float v : y) {
    CHECK((v == 0.0f || v == Approx(1.0f / 0.75f)));
    kept += v != 0.0f;
  }
  CHECK(double(kept) / double(y.size()) == Approx(0.75).margin(0.01));
  CHECK(floats(nn::dropout(random::key(1), 0.0, x)) == floats(x));
  CHECK(jnp::sum(nn::dropout(random::key(1), 1.0, x)).item() == 0.0);
  // The mask is bernoulli(key, 1 - rate): JAX's values for the same key.
  ModeScope mode(true);
  const std::vector<int> mask =
      jax_bools("partitionable", "dropout mask bernoulli(key(0), 0.9, (4,8))");
  const std::vector<float> d = floats(nn::dropout(random::key(0), 0.1, jnp::ones({4, 8})));
  for (size_t i = 0; i < mask.size(); ++i) CHECK((d[i] != 0.0f) == (mask[i] == 1));
}

TEST_CASE("vmap over keys draws each key's own samples") {
  const Array keys = random::split(random::key(11), 4);
  using Sampler = std::function<Array(const Array&)>;
  const std::vector<std::pair<const char*, Sampler>> samplers = {
      {"bits", [](const Array& k) { return random::bits(k, {3}); }},
      {"uniform",
       [](const Array& k) {
         return random::uniform(k, {2, 3});
       }},
      {"normal", [](const Array& k) { return random::normal(k, {5}); }},
      {"bernoulli", [](const Array& k) { return random::bernoulli(k, 0.4, Shape{6}); }},
      {"randint", [](const Array& k) { return random::randint(k, {5}, 0, 100); }},
      {"permutation", [](const Array& k) { return random::permutation(k, 7); }},
      {"fold_in then split",
       [](const Array& k) { return random::key_data(random::split(random::fold_in(k, 3), 2)); }},
  };
  for (const auto& [name, f] : samplers) {
    INFO(name);
    const Array batched = vmap(f)(keys);
    for (int64_t i = 0; i < 4; ++i) {
      const Array one = f(jnp::getitem(keys, {i}));
      CHECK(words(jnp::getitem(batched, {i})) == words(one));
    }
  }
  // A batched message for one key: fold_in(key, i) for each i.
  auto fold = [](const Array& i) { return random::key_data(random::fold_in(random::key(11), i)); };
  const Array folded = vmap(fold)(jnp::arange(3));
  for (int64_t i = 0; i < 3; ++i)
    CHECK(words(jnp::getitem(folded, {i})) == words(fold(Array(int(i)))));
  // Dropout of a batch of rows, each row with its own key.
  const Array rows = jnp::ones({4, 16});
  const Array dropped =
      vmap([](const Array& k, const Array& x) { return nn::dropout(k, 0.5, x); })(keys, rows);
  for (int64_t i = 0; i < 4; ++i)
    CHECK(floats(jnp::getitem(dropped, {i})) ==
          floats(nn::dropout(jnp::getitem(keys, {i}), 0.5, jnp::ones({16}))));
}

}  // namespace random_distributions_test
}  // namespace cjax
