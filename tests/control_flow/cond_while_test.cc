// cond, switch, while_loop and fori_loop: values, gradients against finite differences (cond,
// and while in forward mode), and reverse mode through a while loop failing with JAX's advice.
#include <catch2/catch.hpp>

#include <string>

#include "cjax/api.h"
#include "tests/control_flow/fd_util.h"

using namespace cjax;
using cftest::check_close;
using cftest::numeric_grad;
using cftest::random_f64;

namespace {

Array branchy(const Array& x, const Array& y) {
  return np::sum(cond(
      np::sum(x) > 0.0, [](const Array& a, const Array& b) { return np::sin(a) * b; },
      [](const Array& a, const Array& b) { return np::cos(a) / b + a * a; }, x, y));
}

}  // namespace

TEST_CASE("cond: both branches evaluate and differentiate like the branch taken") {
  std::mt19937 rng(11);
  Array y = random_f64(rng, {3}, 0.5, 1.5);
  for (double shift : {2.0, -2.0}) {
    Array x = random_f64(rng, {3}) + shift;
    INFO("shift " << shift);
    Array direct = shift > 0 ? np::sum(np::sin(x) * y) : np::sum(np::cos(x) / y + x * x);
    CHECK(branchy(x, y).item() == Approx(direct.item()));
    auto [gx, gy] = grad(branchy, argnums<0, 1>)(x, y);
    check_close(gx, numeric_grad([&](const Array& a) { return branchy(a, y); }, x));
    check_close(gy, numeric_grad([&](const Array& a) { return branchy(x, a); }, y));
  }
}

TEST_CASE("cond: branches with different residuals, a closure, inside a scan") {
  std::mt19937 rng(12);
  Array W = random_f64(rng, {2, 2}), xs = random_f64(rng, {6, 2}), h0 = random_f64(rng, {2});
  auto loss = [](const Array& W, const Array& h0, const Array& xs) {
    auto step = [&](const Array& h, const Array& x) {
      Array h2 = cond(
          np::sum(x) > 0.0, [&](const Array& a) { return np::tanh(np::dot(W, a)); },
          [](const Array& a) { return np::exp(a) * 0.5; }, h + x);
      return std::pair<Array, Array>{h2, np::sum(h2)};
    };
    auto [h, ys] = scan(step, h0, xs);
    return np::sum(h) + np::sum(ys);
  };
  auto [gW, gh, gx] = grad(loss, argnums<0, 1, 2>)(W, h0, xs);
  check_close(gW, numeric_grad([&](const Array& a) { return loss(a, h0, xs); }, W));
  check_close(gh, numeric_grad([&](const Array& a) { return loss(W, a, xs); }, h0));
  check_close(gx, numeric_grad([&](const Array& a) { return loss(W, h0, a); }, xs));
}

TEST_CASE("switch: the index is clamped, three branches differentiate") {
  Array x = cjax::array(std::vector<double>{0.3, -0.7}, Shape{2}, DType::f64);
  auto f = [](const Array& i, const Array& x) {
    std::vector<std::function<Array(const Array&)>> branches{
        [](const Array& a) { return np::sum(np::sin(a)); },
        [](const Array& a) { return np::sum(a * a * a); },
        [](const Array& a) { return np::sum(np::exp(a)); }};
    return switch_(i, branches, x);
  };
  std::vector<double> xv = x.to_vector<double>();
  CHECK(f(Array(-5), x).item() == Approx(std::sin(0.3) + std::sin(-0.7)));
  CHECK(f(Array(1), x).item() == Approx(0.027 - 0.343));
  CHECK(f(Array(9), x).item() == Approx(std::exp(0.3) + std::exp(-0.7)));
  Array g = grad([&](const Array& a) { return f(Array(1), a); })(x);
  CHECK(g.to_vector<double>()[0] == Approx(3 * 0.09));
  CHECK(g.to_vector<double>()[1] == Approx(3 * 0.49));
}

TEST_CASE("while_loop: values and forward-mode derivatives, reverse mode fails clearly") {
  // Newton's iteration for sqrt(a), with a data-dependent trip count.
  auto newton = [](const Array& a) {
    auto cond_fn = [&](const std::pair<Array, Array>& c) { return c.second < 20; };
    auto body_fn = [&](const std::pair<Array, Array>& c) {
      return std::pair<Array, Array>{0.5 * (c.first + a / c.first), c.second + 1};
    };
    return while_loop(cond_fn, body_fn, std::pair<Array, Array>{a, Array(0)}).first;
  };
  Array a = Array::scalar(2.0, DType::f64);
  CHECK(newton(a).item() == Approx(std::sqrt(2.0)));
  auto [y, t] = jvp(newton, a, Array::scalar(1.0, DType::f64));
  CHECK(y.item() == Approx(std::sqrt(2.0)));
  CHECK(t.item() == Approx(0.5 / std::sqrt(2.0)));
  try {
    grad(newton)(a);
    FAIL("grad through while_loop did not throw");
  } catch (const UnsupportedError& e) {
    std::string msg = e.what();
    CHECK(msg.find("Reverse-mode differentiation does not work for lax.while_loop") !=
          std::string::npos);
    CHECK(msg.find("Try using lax.scan") != std::string::npos);
  }
}

TEST_CASE("fori_loop: static bounds are a scan (reverse-differentiable), traced bounds a while") {
  std::mt19937 rng(13);
  Array W = random_f64(rng, {3, 3}), x = random_f64(rng, {3});
  auto f = [](const Array& W, const Array& x) {
    return np::sum(fori_loop(
        0, 4, [&](const Array& i, const Array& h) { return np::tanh(np::dot(W, h)) + i; }, x));
  };
  std::string text = to_string(make_jaxpr(f)(W, x));
  CHECK(text.find("scan[") != std::string::npos);
  CHECK(text.find("length=4") != std::string::npos);
  auto [gW, gx] = grad(f, argnums<0, 1>)(W, x);
  check_close(gW, numeric_grad([&](const Array& a) { return f(a, x); }, W));
  check_close(gx, numeric_grad([&](const Array& a) { return f(W, a); }, x));

  auto g = [](const Array& n, const Array& x) {
    return fori_loop(
        Array(0), n, [](const Array&, const Array& h) { return h * 2.0; }, x);
  };
  CHECK(g(Array(5), Array::scalar(1.5, DType::f64)).item() == Approx(48.0));
  std::string wtext = to_string(make_jaxpr(g)(Array(5), Array::scalar(1.5, DType::f64)));
  CHECK(wtext.find("while[") != std::string::npos);
}
