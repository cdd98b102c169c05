// Dropout under checkpoint: the program traces as JAX's, its residuals are JAX's where JAX
// recomputes the mask, and under every policy (everything_saveable and the name policies
// included) the mask is recomputed from the key instead of saved, with the gradient unchanged.
#include <catch2/catch.hpp>

#include <sstream>

#include "cjax/api.h"
#include "passes/policies.h"
#include "tests/frontend/random_values.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace random_remat_test {

namespace jnp = cjax::numpy;
using namespace random_values;

std::string jax(const std::string& title) {
  return golden::jax_case("random.md", "[partitionable] " + title);
}

// scripts/jax_oracle.py's dropout_mlp: params (w1, w2), x, key.
Array dropout_mlp(const Array& w1, const Array& w2, const Array& x, const Array& key) {
  const Array h = nn::gelu(jnp::matmul(x, w1));
  return jnp::sum(jnp::tanh(jnp::matmul(nn::dropout(key, 0.1, h), w2)));
}

const ShapeDtype kW1{DType::f32, {8, 16}}, kW2{DType::f32, {16, 4}}, kX{DType::f32, {4, 8}},
    kKey{DType::key_fry, {}};
const std::vector<std::string> kNames{"params[0]", "params[1]", "x", "kk"};

// A residual report without its source locations (they are the caller's).
std::string without_locations(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (const size_t at = line.find(" from /"); at != std::string::npos) line = line.substr(0, at);
    if (const size_t at = line.find(" from tests/"); at != std::string::npos)
      line = line.substr(0, at);
    out += line + "\n";
  }
  return out;
}
std::string residuals_of(
    const std::function<Array(const Array&, const Array&, const Array&, const Array&)>& f) {
  std::string text;
  for (const SavedResidual& r : saved_residuals(f, kNames)(kW1, kW2, kX, kKey))
    text += r.aval.str_short() + " " + r.description + "\n";
  return without_locations(text);
}

TEST_CASE("dropout traces as JAX's bernoulli and where") {
  ModeScope mode(true);
  CHECK(to_string(make_jaxpr(dropout_mlp)(kW1, kW2, kX, kKey)) == jax("dropout mlp jaxpr"));
  auto bern = [](const Array& k) { return random::bernoulli(k, 0.9, Shape{2, 3}); };
  CHECK(to_string(make_jaxpr(bern)(kKey)) == jax("bernoulli jaxpr"));
}

TEST_CASE("dropout's residuals: JAX's where JAX recomputes the mask, the key where it saves it") {
  // Without checkpoint the mask is saved, as JAX does (JAX 0.11.2's tanh derivative is a newer
  // one_minus_square primitive, so only this line is compared).
  const std::string mask_line = "bool[4,16] output of jitted function '_bernoulli'";
  REQUIRE(jax("dropout mlp residuals no checkpoint").find(mask_line) != std::string::npos);
  CHECK(residuals_of(dropout_mlp).find(mask_line) != std::string::npos);
  for (const char* pol : {"nothing_saveable", "dots_saveable"}) {
    INFO(pol);
    CHECK(residuals_of(checkpoint(dropout_mlp, policies::by_name(pol))) ==
          without_locations(jax(std::string("dropout mlp residuals checkpoint ") + pol)));
  }
  // JAX saves the bool mask under everything_saveable; cjax recomputes it from the key.
  const std::string jax_all =
      without_locations(jax("dropout mlp residuals checkpoint everything_saveable"));
  REQUIRE(jax_all.find(mask_line) != std::string::npos);
  const std::string ours = residuals_of(checkpoint(dropout_mlp, policies::everything_saveable()));
  CHECK(ours.find("bool[") == std::string::npos);
  CHECK(ours.find("key<fry>[] from the argument kk") != std::string::npos);
}

// The same block with its activation and its mask named, for the name policies.
Array named_dropout_mlp(const Array& w1, const Array& w2, const Array& x, const Array& key) {
  const Array h = checkpoint_name(nn::gelu(jnp::matmul(x, w1)), "h");
  const Array keep = checkpoint_name(random::bernoulli(key, 0.9, h.shape()), "mask");
  const Array dropped = jnp::where(keep, h / 0.9, 0.0);
  return jnp::sum(jnp::tanh(jnp::matmul(dropped, w2)));
}

TEST_CASE("under every policy the mask is recomputed, not saved, and the gradient is unchanged") {
  auto fill = [](const Shape& s, double scale, double offset) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return jnp::reshape(jnp::arange(double(n)), s).astype(DType::f32) * scale + offset;
  };
  const Array w1 = fill({8, 16}, 0.01, -0.5), w2 = fill({16, 4}, 0.02, -0.6);
  const Array x = fill({4, 8}, 0.1, -1.0), key = random::key(3);
  const Array plain = grad(named_dropout_mlp)(w1, w2, x, key);
  for (const std::string& pol : policies::names()) {
    INFO(pol);
    const PolicyRef policy = policies::by_name(pol, {"h", "mask"}, {});
    auto remat = checkpoint(named_dropout_mlp, policy);
    for (const SavedResidual& r : saved_residuals(remat, kNames)(kW1, kW2, kX, kKey)) {
      INFO(r.description);
      CHECK(r.aval.dtype != DType::bool_);
      CHECK(r.aval.dtype != DType::u32);
    }
    // The same arithmetic on the interpreter, recomputed or saved: equal to the last bit.
    const Array g = grad(remat)(w1, w2, x, key);
    CHECK(jnp::max(jnp::abs(g - plain)).item() == 0.0);
  }
}

}  // namespace random_remat_test
}  // namespace cjax
