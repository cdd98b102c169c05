// custom_jvp and custom_vjp's options: nondiff_argnums, defjvps and symbolic_zeros, against
// jax 0.11.2's printouts (tests/golden/jax_0_11_2/custom.md) and analytic gradients.
#include <catch2/catch.hpp>

#include <cmath>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace custom_options_test {

namespace jnp = cjax::numpy;
using testing::f32;

template <class F, class... A>
std::string printed(F f, const A&... a) {
  return to_string(make_jaxpr(f)(a...));
}

const Array xs = cjax::array(std::vector<float>{0.5f, -1.25f, 2.0f});

TEST_CASE("nondiff_argnums: a static argument is baked into the call and handed to the rule") {
  // JAX's oracle: custom_jvp(lambda n, x: x ** n, nondiff_argnums=(0,)) at n = 2.
  auto power =
      custom_jvp([](int n, const Array& x) { return lax::integer_pow(x, n); }, nondiff_argnums<0>);
  power.defjvp([](int n, const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    return std::pair{lax::integer_pow(x, n),
                     double(n) * lax::integer_pow(x, n - 1) * std::get<0>(t)};
  });
  CHECK(printed([&](const Array& a) { return power(2, a); }, f32({3})) ==
        golden::jax_case("custom.md", "custom_jvp nondiff_argnums jaxpr"));
  const Array g = grad([&](const Array& a) { return jnp::sum(power(3, a)); })(xs);
  for (int64_t i = 0; i < 3; ++i) CHECK(g[i].item() == Approx(3.0 * std::pow(xs[i].item(), 2)));

  // A custom_vjp whose bwd gets the static scale first and returns x's cotangent only.
  auto scaled = custom_vjp([](const Array& x, double s) { return jnp::sin(x) * s; },
                           nondiff_argnums<1>, "scaled");
  scaled.defvjp(
      [](const Array& x, double s) {
        return std::pair{jnp::sin(x) * s, x};
      },
      [](double s, const Array& x, const Array& g) { return jnp::cos(x) * g * s; });
  const Array gs = grad([&](const Array& a) { return jnp::sum(scaled(a, 4.0)); })(xs);
  for (int64_t i = 0; i < 3; ++i) CHECK(gs[i].item() == Approx(4.0 * std::cos(xs[i].item())));
  CHECK(scaled(xs, 2.0)[0].item() == Approx(2.0 * std::sin(0.5)));
}

TEST_CASE("defjvps: one rule per argument, the parts summed, nullptr for none") {
  auto f = custom_jvp([](const Array& x, const Array& y) { return jnp::sin(x) * y; }, "f");
  f.defjvps(
      [](const Array& t, const Array&, const Array& x, const Array& y) {
        return jnp::cos(x) * y * t;
      },
      [](const Array& t, const Array&, const Array& x, const Array&) { return jnp::sin(x) * t; });
  const Array y = cjax::array(std::vector<float>{2.0f, 3.0f, -1.0f});
  auto [gx, gy] =
      grad([&](const Array& a, const Array& b) { return jnp::sum(f(a, b)); }, argnums<0, 1>)(xs, y);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(gx[i].item() == Approx(std::cos(xs[i].item()) * y[i].item()));
    CHECK(gy[i].item() == Approx(std::sin(xs[i].item())));
  }
  // The parts are added with add_any, as JAX's add_tangents.
  CHECK(
      printed([&](const Array& a,
                  const Array& b) { return jvp(f, std::make_tuple(a, b), std::make_tuple(a, b)); },
              f32({3}), f32({3}))
          .find("add_any") != std::string::npos);
  // y's rule left out: y gets no gradient from it.
  auto g = custom_jvp([](const Array& x, const Array& y) { return jnp::sin(x) * y; }, "g");
  g.defjvps([](const Array& t, const Array&, const Array& x,
               const Array& y) { return jnp::cos(x) * y * t; },
            nullptr);
  const Array gy0 =
      grad([&](const Array& a, const Array& b) { return jnp::sum(g(a, b)); }, argnums<1>)(xs, y);
  for (int64_t i = 0; i < 3; ++i) CHECK(gy0[i].item() == 0.0);
}

TEST_CASE("symbolic_zeros: the rule sees which tangents are zero") {
  // JAX's oracle: a custom_jvp sin with symbolic_zeros=True under jvp.
  auto s = custom_jvp([](const Array& x) { return jnp::sin(x); });
  s.defjvp(
      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
        return std::pair{jnp::sin(std::get<0>(p)), jnp::cos(std::get<0>(p)) * std::get<0>(t)};
      },
      "<lambda>", /*symbolic_zeros=*/true);
  CHECK(printed([&](const Array& a, const Array& t) { return jvp(s, a, t); }, f32({3}), f32({3})) ==
        golden::jax_case("custom.md", "custom_jvp symbolic_zeros jaxpr"));
  CHECK(printed([&](const Array& a) { return s(a); }, f32({3})).find("symbolic_zeros=True") !=
        std::string::npos);

  // Differentiating with respect to x only: y's tangent is a symbolic zero, and the rule skips
  // its term (a rule that used it would still be right: it is a real zero).
  int zero_x = 0, zero_y = 0, traced = 0;
  auto f = custom_jvp([](const Array& x, const Array& y) { return x * y; }, "f");
  f.defjvp(
      [&](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
        ++traced;
        auto [x, y] = p;
        auto [tx, ty] = t;
        zero_x += is_symbolic_zero(tx);
        zero_y += is_symbolic_zero(ty);
        const Array dx = tx * y;
        return std::pair{x * y, is_symbolic_zero(ty) ? dx : dx + x * ty};
      },
      "f_jvp", true);
  const Array y = cjax::array(std::vector<float>{2.0f, 3.0f, -1.0f});
  const Array gx = grad([&](const Array& a, const Array& b) { return jnp::sum(f(a, b)); })(xs, y);
  CHECK(traced == 1);
  CHECK(zero_x == 0);
  CHECK(zero_y == 1);
  for (int64_t i = 0; i < 3; ++i) CHECK(gx[i].item() == Approx(y[i].item()));
  const Array gy =
      grad([&](const Array& a, const Array& b) { return jnp::sum(f(a, b)); }, argnums<1>)(xs, y);
  CHECK(traced == 2);
  CHECK(zero_x == 1);  // now x's tangent is the zero one
  for (int64_t i = 0; i < 3; ++i) CHECK(gy[i].item() == Approx(xs[i].item()));
}

TEST_CASE("symbolic_zeros on a custom_vjp: fwd asks is_perturbed, bwd sees zero cotangents") {
  std::vector<bool> perturbed_w;
  std::vector<bool> zero_ct;
  using Out = std::pair<Array, Array>;
  auto f = custom_vjp(
      [](const Array& x, const Array& w) {
        return Out{x * w, jnp::sin(x)};
      },
      "two_outputs");
  f.defvjp(
      [&](const Array& x, const Array& w) {
        perturbed_w.push_back(is_perturbed(w));
        CHECK(is_perturbed(x));
        return std::pair{Out{x * w, jnp::sin(x)}, std::tuple{x, w}};
      },
      [&](const std::tuple<Array, Array>& res, const Out& ct) {
        auto [x, w] = res;
        zero_ct.push_back(is_symbolic_zero(ct.second));
        Array dx = ct.first * w;
        if (!is_symbolic_zero(ct.second)) dx = dx + jnp::cos(x) * ct.second;
        return std::tuple{dx, ct.first * x};
      },
      "fwd", "bwd", /*symbolic_zeros=*/true);
  const Array w = cjax::array(std::vector<float>{2.0f, 3.0f, -1.0f});
  // Only the first output is used, and only x is differentiated.
  const Array gx =
      grad([&](const Array& a, const Array& b) { return jnp::sum(f(a, b).first); })(xs, w);
  REQUIRE(perturbed_w == std::vector<bool>{false});
  REQUIRE(zero_ct == std::vector<bool>{true});
  for (int64_t i = 0; i < 3; ++i) CHECK(gx[i].item() == Approx(w[i].item()));
  // Both outputs used: the cotangent is real, and the gradient has both terms.
  const Array g2 = grad([&](const Array& a, const Array& b) {
    auto [p, q] = f(a, b);
    return jnp::sum(p) + jnp::sum(q);
  })(xs, w);
  CHECK(zero_ct.back() == false);
  for (int64_t i = 0; i < 3; ++i)
    CHECK(g2[i].item() == Approx(w[i].item() + std::cos(xs[i].item())));
  // Outside a rule nothing is a symbolic zero.
  CHECK_FALSE(is_symbolic_zero(w));
  CHECK(is_perturbed(w));
}

TEST_CASE("custom rules nest: a custom_vjp inside a custom_jvp, both inside cond and jit") {
  // inner: sin with a bwd that triples the cotangent; outer: a custom_jvp over inner whose rule
  // says 5 t. The outer rule decides grad; inner's bwd decides where only inner is called.
  auto inner = custom_vjp([](const Array& x) { return jnp::sin(x); }, "inner");
  inner.defvjp(
      [](const Array& x) {
        return std::pair{jnp::sin(x), x};
      },
      [](const Array& x, const Array& g) { return 3.0 * jnp::cos(x) * g; });
  auto outer = custom_jvp([&](const Array& x) { return inner(x) * 2.0; }, "outer");
  outer.defjvp([&](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    return std::pair{inner(std::get<0>(p)) * 2.0, 5.0 * std::get<0>(t)};
  });
  const Array g_outer = grad([&](const Array& a) { return jnp::sum(outer(a)); })(xs);
  const Array g_inner = grad([&](const Array& a) { return jnp::sum(inner(a)); })(xs);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(g_outer[i].item() == 5.0);
    CHECK(g_inner[i].item() == Approx(3.0 * std::cos(xs[i].item())));
  }
  // In both branches of a cond, under jit: the branch taken decides.
  auto branchy = [&](const Array& p, const Array& a) {
    return jnp::sum(cond(
        p > 0.0, [&](const Array& x) { return outer(x); }, [&](const Array& x) { return inner(x); },
        a));
  };
  const Array on = jit(grad(branchy, argnums<1>))(Array(1.0f), xs);
  const Array off = jit(grad(branchy, argnums<1>))(Array(-1.0f), xs);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(on[i].item() == Approx(5.0));
    CHECK(off[i].item() == Approx(3.0 * std::cos(xs[i].item())));
  }
  // A custom_vjp whose fwd calls a custom_jvp function: grad runs the bwd, not the inner rule.
  auto wrapper = custom_vjp([&](const Array& x) { return outer(x); }, "wrapper");
  wrapper.defvjp(
      [&](const Array& x) {
        return std::pair{outer(x), x};
      },
      [](const Array&, const Array& g) { return 7.0 * g; });
  const Array gw = grad([&](const Array& a) { return jnp::sum(wrapper(a)); })(xs);
  for (int64_t i = 0; i < 3; ++i) CHECK(gw[i].item() == 7.0);
}

}  // namespace custom_options_test
}  // namespace cjax
