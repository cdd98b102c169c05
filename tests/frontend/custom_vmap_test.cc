// vmap of custom_jvp and custom_vjp functions: the call stays one custom call over the batched
// body (no loop over the examples), and differentiating the batched call uses the user's rules,
// batched: against the per-example rule's results and analytic gradients.
#include <catch2/catch.hpp>

#include <cmath>

#include "cjax/api.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"

namespace cjax {
namespace custom_vmap_test {

namespace jnp = cjax::numpy;
using testing::f32;

// sin, whose jvp rule says 3 t: a gradient of 3 shows the rule ran.
auto make_odd() {
  auto odd = custom_jvp([](const Array& x) { return jnp::sin(x); }, "odd");
  odd.defjvp(
      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
        return std::pair{jnp::sin(std::get<0>(p)), 3.0 * std::get<0>(t)};
      },
      "odd_jvp");
  return odd;
}

// tanh(x @ w) with a hand-written bwd (residuals: the output and both operands).
auto make_layer() {
  auto f = custom_vjp([](const Array& x, const Array& w) { return jnp::tanh(jnp::matmul(x, w)); },
                      "layer");
  f.defvjp(
      [](const Array& x, const Array& w) {
        const Array y = jnp::tanh(jnp::matmul(x, w));
        return std::pair{y, std::tuple{x, w, y}};
      },
      [](const std::tuple<Array, Array, Array>& res, const Array& g) {
        auto [x, w, y] = res;
        const Array gz = g * (1.0 - y * y);
        const Array dx = jnp::matmul(gz, jnp::transpose(w));
        const Array dw = jnp::matmul(jnp::transpose(x), gz);
        return std::tuple{dx, dw};
      },
      "layer_fwd", "layer_bwd");
  return f;
}

Array grid(const Shape& shape, double scale, double shift) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return jnp::reshape(jnp::arange(double(n)), shape).astype(DType::f32) * scale + shift;
}

TEST_CASE("vmap of a custom_jvp keeps one custom_jvp_call over the batched body") {
  auto odd = make_odd();
  const std::string text =
      to_string(make_jaxpr(vmap([&](const Array& x) { return odd(x); }))(f32({4, 3})));
  CHECK(text.find("custom_jvp_call[") != std::string::npos);
  CHECK(text.find("jvp=odd_jvp") != std::string::npos);
  CHECK(text.find("scan") == std::string::npos);
  CHECK(text.find("f32[4,3] = sin") != std::string::npos);
  // The rule decides under vmap too: grad(sum(vmap(odd))) is 3, and so is vmap(grad).
  const Array x = grid({4, 3}, 0.2, -1.0);
  const Array g = grad([&](const Array& a) { return jnp::sum(vmap(odd)(a)); })(x);
  const Array vg = vmap(grad([&](const Array& a) { return jnp::sum(odd(a)); }))(x);
  const Array evaluated = vmap(odd)(x);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      CHECK(g[i][j].item() == 3.0);
      CHECK(vg[i][j].item() == 3.0);
      CHECK(evaluated[i][j].item() == Approx(std::sin(x[i][j].item())));
    }
  // jvp through the batched call, the batch along axis 1.
  auto batched = vmap([&](const Array& a) { return odd(a); }, 1, 1);
  auto [y, t] = jvp(batched, x, jnp::ones_like(x));
  for (int64_t i = 0; i < 4; ++i) CHECK(t[i][1].item() == 3.0);
  test::require_close(y.buffer(), jnp::sin(x).buffer());
}

TEST_CASE("vmap of a custom_jvp whose rule calls the function itself") {
  // The rule's own custom_jvp_call is batched when the rule is, not before (no endless batching).
  using Unary = CustomJvp<Array, const Array&>;
  Unary lse(
      [](const Array& x) {
        const Array m = jnp::max(x);
        return m + jnp::log(jnp::sum(jnp::exp(x - m)));
      },
      "lse");
  lse.defjvp([&lse](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    const Array y = lse(x);
    return std::pair{y, jnp::sum(jnp::exp(x - y) * std::get<0>(t))};
  });
  const Array x = grid({4, 3}, 0.3, -1.0);
  const Array g = vmap(grad([&](const Array& a) { return lse(a); }))(x);
  const Array g2 = grad([&](const Array& a) { return jnp::sum(vmap(lse)(a)); })(x);
  for (int64_t i = 0; i < 4; ++i) {
    const Array sm = jnp::exp(x[i] - lse(x[i]));
    test::require_close(g[i].buffer(), sm.buffer());
    test::require_close(g2[i].buffer(), sm.buffer());
  }
}

TEST_CASE("vmap of a custom_vjp: fwd and bwd batched, shared weights get summed cotangents") {
  auto layer = make_layer();
  const Array xs = grid({5, 2, 3}, 0.05, -0.3);  // 5 examples of [2, 3]
  const Array w = grid({3, 4}, 0.1, -0.5);       // shared
  auto loss = [&](const Array& x, const Array& v) {
    return jnp::sum(vmap([&](const Array& a) { return layer(a, v); })(x));
  };
  const std::string text = to_string(make_jaxpr(loss)(f32({5, 2, 3}), f32({3, 4})));
  CHECK(text.find("custom_vjp_call[") != std::string::npos);
  CHECK(text.find("scan") == std::string::npos);
  auto plain = [](const Array& x, const Array& v) {
    return jnp::sum(jnp::tanh(jnp::matmul(x, v)));
  };
  auto [gx, gw] = grad(loss, argnums<0, 1>)(xs, w);
  auto [px, pw] = grad(plain, argnums<0, 1>)(xs, w);
  test::require_close(gx.buffer(), px.buffer());
  test::require_close(gw.buffer(), pw.buffer());
  // Per-example weight gradients: w batched too, each example's own.
  auto per_example =
      vmap(grad([&](const Array& x, const Array& v) { return jnp::sum(layer(x, v)); }, argnums<1>),
           {0, std::nullopt});
  const Array pe = per_example(xs, w);
  REQUIRE(pe.shape() == Shape{5, 3, 4});
  test::require_close(jnp::sum(pe, 0).buffer(), pw.buffer());
  // The batched bwd is the user's: a bwd that doubles dw doubles the summed gradient.
  auto doubled = custom_vjp(
      [](const Array& x, const Array& v) { return jnp::tanh(jnp::matmul(x, v)); }, "doubled");
  doubled.defvjp(
      [](const Array& x, const Array& v) {
        const Array y = jnp::tanh(jnp::matmul(x, v));
        return std::pair{y, std::tuple{x, v, y}};
      },
      [](const std::tuple<Array, Array, Array>& res, const Array& g) {
        auto [x, v, y] = res;
        const Array gz = g * (1.0 - y * y);
        return std::tuple{jnp::matmul(gz, jnp::transpose(v)),
                          2.0 * jnp::matmul(jnp::transpose(x), gz)};
      });
  const Array gw2 = grad([&](const Array& v) {
    return jnp::sum(vmap([&](const Array& a) { return doubled(a, v); })(xs));
  })(w);
  test::require_close(gw2.buffer(), (2.0 * pw).buffer());
}

}  // namespace custom_vmap_test
}  // namespace cjax
