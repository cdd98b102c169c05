// nn::layer_norm and nn::rms_norm: the hand-written numpy forms, value for value, their
// gradients against central differences, and bad scales or inputs refused naming the caller.
#include <catch2/catch.hpp>

#include <random>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

namespace nn_norm_test {

using namespace cjax;
namespace jnp = cjax::numpy;

TEST_CASE("nn::layer_norm and rms_norm are their numpy formulas") {
  std::mt19937 rng(3);
  const Array x = testing::random_f64(rng, {4, 6});
  const Array g = testing::random_f64(rng, {6}), b = testing::random_f64(rng, {6});
  const Array centred = x - jnp::mean(x, {-1}, true);
  const Array by_hand =
      centred * jnp::rsqrt(jnp::mean(jnp::square(centred), {-1}, true) + 1e-5) * g + b;
  CHECK(nn::layer_norm(x, g, b).to_vector<double>() == by_hand.to_vector<double>());
  const Array rms = x * jnp::rsqrt(jnp::mean(jnp::square(x), {-1}, true) + 1e-6) * g;
  CHECK(nn::rms_norm(x, g).to_vector<double>() == rms.to_vector<double>());
  // Each row of layer_norm(x, 1, 0) has mean 0 and variance 1 - eps / (var + eps).
  const Array unit = nn::layer_norm(x, 1.0, 0.0, 0.0);
  for (double m : jnp::mean(unit, {-1}).to_vector<double>()) CHECK(m == Approx(0).margin(1e-12));
  for (double v : jnp::var(unit, {-1}).to_vector<double>()) CHECK(v == Approx(1).epsilon(1e-12));
}

TEST_CASE("nn::layer_norm's gradient matches central differences") {
  std::mt19937 rng(4);
  const Array x = testing::random_f64(rng, {3, 5});
  const Array g = testing::random_f64(rng, {5}), b = testing::random_f64(rng, {5});
  auto f = [&](const Array& a) { return jnp::sum(jnp::sin(nn::layer_norm(a, g, b))); };
  const std::vector<double> want = testing::numeric_grad(f, x);
  const std::vector<double> got = grad(f)(x).to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-9));
}

TEST_CASE("nn::layer_norm and rms_norm refuse bad scales and inputs") {
  const Array x = jnp::ones({2, 4});
  CHECK_THROWS_WITH(nn::layer_norm(x, jnp::ones({3}), 0.0),
                    Catch::Contains("layer_norm: scale must be a scalar or a vector of x's last "
                                    "axis (4), got f32[3]"));
  CHECK_THROWS_WITH(nn::rms_norm(x, jnp::ones({2, 4})), Catch::Contains("rms_norm: scale"));
  CHECK_THROWS_WITH(nn::layer_norm(jnp::ones({2, 4}, DType::i32), 1.0, 0.0),
                    Catch::Contains("floating-point array"));
  CHECK_THROWS_WITH(nn::layer_norm(x, 1.0, 0.0, -1.0), Catch::Contains("epsilon must be >= 0"));
  CHECK_THROWS_WITH(nn::layer_norm(x, 1.0, jnp::ones({5})),
                    Catch::Contains("nn_norm_test.cc"));  // the caller's location
}

}  // namespace nn_norm_test
