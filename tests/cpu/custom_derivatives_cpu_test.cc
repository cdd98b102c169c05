// custom_jvp and custom_vjp functions on the compiled back end: evaluated, differentiated, under
// jit, vmap and scan, against the interpreter and the rules' analytic values.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "cjax/api.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"

namespace cjax {
namespace custom_derivatives_cpu_test {

namespace jnp = cjax::numpy;

Array random_f32(std::mt19937& rng, const Shape& shape) {
  return testing::random_f64(rng, shape).astype(DType::f32);
}

// softplus(x) = log(1 + exp(x)) with the rule d/dx = sigmoid(x) * 2 (deliberately twice the
// true derivative, so the rule's use is visible), and x * w (w broadcast along x's rows) whose bwd
// halves the product rule.
struct Fns {
  CustomJvp<Array, const Array&> softplus{
      [](const Array& x) { return jnp::log(1.0 + jnp::exp(x)); }, "softplus"};
  CustomVjp<Array, const Array&, const Array&> scaled{
      [](const Array& x, const Array& w) { return x * w; }, "scaled"};
  Fns() {
    softplus.defjvp([this](const std::tuple<Array>& p, const std::tuple<Array>& t) {
      const Array& x = std::get<0>(p);
      const Array y = softplus(x);
      return std::pair{y, 2.0 * nn::sigmoid(x) * std::get<0>(t)};
    });
    scaled.defvjp(
        [](const Array& x, const Array& w) {
          return std::pair{x * w, std::tuple{x, w}};
        },
        [](const std::tuple<Array, Array>& res, const Array& g) {
          auto [x, w] = res;
          const Array gx = 0.5 * g * w;
          return std::tuple{gx, jnp::sum(0.5 * g * x, 0)};
        });
  }
};

TEST_CASE("a custom_vjp bwd that returns the wrong shape is an error naming the rule") {
  auto bad = custom_vjp([](const Array& x, const Array& w) { return x * w; }, "bad");
  bad.defvjp(
      [](const Array& x, const Array& w) {
        return std::pair{x * w, std::tuple{x, w}};
      },
      [](const std::tuple<Array, Array>& res, const Array& g) {
        auto [x, w] = res;
        return std::tuple{g * w, g * x};  // w's cotangent not summed over the rows
      },
      "bad_fwd", "bad_bwd");
  auto loss = [&](const Array& a, const Array& v) { return jnp::sum(bad(a, v)); };
  CHECK_THROWS_WITH(grad(loss, argnums<0, 1>)(jnp::ones({4, 3}), jnp::ones({3})),
                    Catch::Contains("At output 1 the bwd rule bad_bwd produced an output of "
                                    "shape/dtype f32[4,3] corresponding to an input of "
                                    "shape/dtype f32[3]"));
}

TEST_CASE("custom rules differentiate compiled code as interpreted, under jit, vmap and scan") {
  Fns fns;
  std::mt19937 rng(51);
  const Array x = random_f32(rng, {4, 3}), w = random_f32(rng, {3});
  auto loss = [&](const Array& a, const Array& v) {
    return jnp::sum(fns.softplus(fns.scaled(a, v)));
  };
  // The rules: d softplus = 2 sigmoid, d scaled = half the product rule.
  const Array z = x * w, s = 2.0 * nn::sigmoid(z);
  const Array want_x = 0.5 * s * w, want_w = jnp::sum(0.5 * s * x, 0);
  std::vector<Array> got_i;
  {
    UseInterpreter interp;
    auto [gx, gw] = grad(loss, argnums<0, 1>)(x, w);
    got_i = {gx, gw};
  }
  test::require_close(got_i[0].buffer(), want_x.buffer());
  test::require_close(got_i[1].buffer(), want_w.buffer());
  auto [gx, gw] = jit(grad(loss, argnums<0, 1>))(x, w);  // compiled
  test::require_close(gx.buffer(), want_x.buffer());
  test::require_close(gw.buffer(), want_w.buffer());
  // Evaluated, the functions are their bodies.
  test::require_close(fns.softplus(x).buffer(), jnp::log(1.0 + jnp::exp(x)).buffer());
  // Per-example gradients of the rows, by vmap.
  auto row_loss = [&](const Array& row) { return jnp::sum(fns.softplus(fns.scaled(row, w))); };
  test::require_close(vmap(grad(row_loss))(x).buffer(), want_x.buffer());
  // Inside a scan over the rows.
  auto scanned = [&](const Array& a) {
    return scan(
               [&](const Array& c, const Array& row) {
                 return std::pair{c + jnp::sum(fns.softplus(fns.scaled(row, w))), c};
               },
               Array(0.0f), a)
        .first;
  };
  test::require_close(grad(scanned)(x).buffer(), want_x.buffer());
}

}  // namespace custom_derivatives_cpu_test
}  // namespace cjax
