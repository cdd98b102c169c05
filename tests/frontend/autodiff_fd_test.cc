// Gradients of composite functions against central finite differences, in f64: the tutorial's
// f, an MLP loss over a pytree of parameters, tanh/exp/log compositions, and broadcasting.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::numeric_grad;
using cjax::testing::random_f64;

namespace fdtest {
struct Layer {
  Array w, b;
};
CJAX_PYTREE(Layer, w, b)
}  // namespace fdtest

namespace {

void check_close(const Array& got, const std::vector<double>& want) {
  std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(want[i]).epsilon(1e-6).margin(1e-8));
}

// The tutorial's g.
Array sin_dot(const Array& W, const Array& x) {
  return np::sin(np::dot(W, x));
}

Array tutorial_loss(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  return np::sum(sin_dot(W3, sin_dot(W2, sin_dot(W1, x))));
}

}  // namespace

TEST_CASE("finite differences: the tutorial's f, every argument") {
  std::mt19937 rng(1);
  Array W1 = random_f64(rng, {5, 4}), W2 = random_f64(rng, {6, 5}), W3 = random_f64(rng, {7, 6}),
        x = random_f64(rng, {4});
  auto [g1, g2, g3, gx] = grad(tutorial_loss, argnums<0, 1, 2, 3>)(W1, W2, W3, x);
  check_close(g1, numeric_grad([&](const Array& a) { return tutorial_loss(a, W2, W3, x); }, W1));
  check_close(g2, numeric_grad([&](const Array& a) { return tutorial_loss(W1, a, W3, x); }, W2));
  check_close(g3, numeric_grad([&](const Array& a) { return tutorial_loss(W1, W2, a, x); }, W3));
  check_close(gx, numeric_grad([&](const Array& a) { return tutorial_loss(W1, W2, W3, a); }, x));
}

TEST_CASE("finite differences: an MLP loss over a vector of layers") {
  std::mt19937 rng(2);
  std::vector<fdtest::Layer> params{{random_f64(rng, {3, 4}), random_f64(rng, {4})},
                                    {random_f64(rng, {4, 2}), random_f64(rng, {2})}};
  Array x = random_f64(rng, {5, 3}), y = random_f64(rng, {5, 2});
  auto loss = [](const std::vector<fdtest::Layer>& ps, const Array& xs, const Array& ys) {
    Array h = xs;
    for (size_t i = 0; i < ps.size(); ++i) {
      h = np::dot(h, ps[i].w) + ps[i].b;
      if (i + 1 < ps.size()) h = np::tanh(h);
    }
    // Softmax cross-entropy against soft targets, plus a squared error term.
    Array logz = np::log(np::sum(np::exp(h), 1, /*keepdims=*/true));
    Array ce = -np::mean(np::sum(ys * (h - logz), 1));
    return ce + 0.1 * np::mean((h - ys) * (h - ys));
  };
  std::vector<fdtest::Layer> gp = grad(loss)(params, x, y);
  REQUIRE(gp.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    auto perturb_w = [&](const Array& w) {
      auto p = params;
      p[i].w = w;
      return loss(p, x, y);
    };
    auto perturb_b = [&](const Array& b) {
      auto p = params;
      p[i].b = b;
      return loss(p, x, y);
    };
    check_close(gp[i].w, numeric_grad(perturb_w, params[i].w));
    check_close(gp[i].b, numeric_grad(perturb_b, params[i].b));
  }
  // The value agrees with the loss evaluated directly.
  auto [value, unused] = value_and_grad(loss)(params, x, y);
  CHECK(value.item() == Approx(loss(params, x, y).item()).epsilon(1e-12));
}

TEST_CASE("finite differences: tanh, exp, log, sqrt and division compositions") {
  std::mt19937 rng(3);
  Array x = random_f64(rng, {6}, 0.2, 1.5);
  std::vector<std::function<Array(const Array&)>> fns{
      [](const Array& v) { return np::sum(np::log(1.0 + np::exp(np::tanh(v) * v))); },
      [](const Array& v) { return np::sum(np::exp(-v * v) / (1.0 + v * v)); },
      [](const Array& v) { return np::sum(np::sqrt(v) * np::log(v) - np::tanh(np::exp(v))); },
      [](const Array& v) { return np::prod(np::log1p(v)) + np::max(np::sin(3.0 * v)); },
      [](const Array& v) {
        return np::sum(nn::gelu(v) + nn::sigmoid(2.0 * v) * nn::relu(v - 0.5));
      },
      [](const Array& v) { return np::sum(np::power(v, 2.5) + np::where(v > 1.0, v * v, -v)); },
  };
  for (size_t i = 0; i < fns.size(); ++i) {
    INFO("function " << i);
    check_close(grad(fns[i])(x), numeric_grad(fns[i], x));
  }
}

TEST_CASE("finite differences: broadcasting in both directions") {
  std::mt19937 rng(4);
  Array a = random_f64(rng, {3, 1}), b = random_f64(rng, {4}), s = random_f64(rng, {});
  auto f = [](const Array& p, const Array& q, const Array& r) {
    Array t = (p + q) * p * 2.0 - q / (1.0 + p * p);  // [3,4]
    return np::sum(np::tanh(t * r)) + np::sum(p) * r;
  };
  auto [ga, gb, gs] = grad(f, argnums<0, 1, 2>)(a, b, s);
  CHECK(ga.shape() == Shape{3, 1});
  CHECK(gb.shape() == Shape{4});
  CHECK(gs.shape() == Shape{});
  check_close(ga, numeric_grad([&](const Array& v) { return f(v, b, s); }, a));
  check_close(gb, numeric_grad([&](const Array& v) { return f(a, v, s); }, b));
  check_close(gs, numeric_grad([&](const Array& v) { return f(a, b, v); }, s));
}

TEST_CASE("finite differences: vjp of a vector function, cotangent by cotangent") {
  std::mt19937 rng(5);
  Array W = random_f64(rng, {3, 4}), x = random_f64(rng, {4});
  auto f = [](const Array& w, const Array& v) { return np::tanh(np::dot(w, v)) * np::sum(v); };
  auto [y, f_vjp] = vjp(f, W, x);
  Array ct = random_f64(rng, {3});
  auto [dW, dx] = f_vjp(ct);
  auto projected = [&](const Array& v) { return np::sum(f(W, v) * ct); };
  check_close(dx, numeric_grad(projected, x));
  check_close(dW, numeric_grad([&](const Array& w) { return np::sum(f(w, x) * ct); }, W));
}
