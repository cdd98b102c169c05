// Gradients through scan against central finite differences (f64): the tutorial's scan over
// layers, reverse scans, pytree carries, loop-invariant consts, per-iteration outputs and
// zero-length scans.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cjax/api.h"
#include "passes/policies.h"
#include "tests/control_flow/fd_util.h"

using namespace cjax;
using cftest::check_close;
using cftest::numeric_grad;
using cftest::random_f64;

namespace {

using WB = std::pair<Array, Array>;

std::pair<Array, std::tuple<>> layer(const Array& x, const WB& wb) {
  return {np::maximum(np::dot(x, wb.first) + wb.second, 0.0), {}};
}

Array net(const Array& all_weights, const Array& all_biases, const Array& x) {
  return scan(layer, x, WB{all_weights, all_biases}).first;
}

Array net_loss(const Array& W, const Array& b, const Array& x) {
  return np::sum(np::tanh(net(W, b, x)));
}

}  // namespace

TEST_CASE("scan: the tutorial's scan over layers, forward values") {
  std::mt19937 rng(3);
  Array W = random_f64(rng, {3, 4, 4}), b = random_f64(rng, {3, 4}), x = random_f64(rng, {4});
  Array got = net(W, b, x);
  Array want = x;
  for (int64_t l = 0; l < 3; ++l) want = np::maximum(np::dot(want, W[l]) + b[l], 0.0);
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(w[i]));
}

TEST_CASE("scan: grad of the scan over layers matches finite differences") {
  std::mt19937 rng(4);
  Array W = random_f64(rng, {3, 4, 4}), b = random_f64(rng, {3, 4}, 0.1, 1.0),
        x = random_f64(rng, {4});
  auto [gW, gb, gx] = grad(net_loss, argnums<0, 1, 2>)(W, b, x);
  check_close(gW, numeric_grad([&](const Array& a) { return net_loss(a, b, x); }, W));
  check_close(gb, numeric_grad([&](const Array& a) { return net_loss(W, a, x); }, b));
  check_close(gx, numeric_grad([&](const Array& a) { return net_loss(W, b, a); }, x));
}

namespace cftest {
struct State {
  Array h, c;
};
CJAX_PYTREE(State, h, c)
}  // namespace cftest
using cftest::State;

TEST_CASE("scan: reverse scans with per-step outputs, against finite differences") {
  std::mt19937 rng(5);
  Array xs = random_f64(rng, {5, 3}), h0 = random_f64(rng, {3}), W = random_f64(rng, {3, 3});
  // A closure over W (a loop-invariant const), ys used in the loss, scanned last to first.
  auto loss = [](const Array& W, const Array& h0, const Array& xs, bool reverse) {
    auto step = [&](const Array& h, const Array& x) {
      Array h2 = np::tanh(np::dot(W, h) + x);
      return std::pair<Array, Array>{h2, np::sin(h2) * x};
    };
    auto [h, ys] = scan(step, h0, xs, std::nullopt, reverse);
    return np::sum(h) + np::sum(ys * ys);
  };
  for (bool reverse : {false, true}) {
    INFO("reverse=" << reverse);
    auto [gW, gh, gx] = grad(loss, argnums<0, 1, 2>)(W, h0, xs, reverse);
    check_close(gW, numeric_grad([&](const Array& a) { return loss(a, h0, xs, reverse); }, W));
    check_close(gh, numeric_grad([&](const Array& a) { return loss(W, a, xs, reverse); }, h0));
    check_close(gx, numeric_grad([&](const Array& a) { return loss(W, h0, a, reverse); }, xs));
  }
  // Reversing the scan reverses the visiting order: ys[t] still belongs to xs[t].
  auto fwd_ys = [&](bool reverse) {
    auto step = [](const Array& acc, const Array& x) {
      Array a = acc + x;
      return std::pair<Array, Array>{a, a};
    };
    return scan(step, np::zeros({3}, DType::f64), xs, std::nullopt, reverse).second;
  };
  std::vector<double> xv = xs.to_vector<double>(), fy = fwd_ys(false).to_vector<double>(),
                      ry = fwd_ys(true).to_vector<double>();
  for (size_t j = 0; j < 3; ++j) {
    CHECK(fy[j] == Approx(xv[j]));                  // ys[0] = xs[0] forward
    CHECK(ry[4 * 3 + j] == Approx(xv[4 * 3 + j]));  // ys[4] = xs[4] in reverse
  }
}

TEST_CASE("scan: a pytree carry (a struct and a pair) differentiates") {
  std::mt19937 rng(6);
  Array xs = random_f64(rng, {4, 2}), U = random_f64(rng, {2, 2}), h0 = random_f64(rng, {2}),
        c0 = random_f64(rng, {2});
  auto loss = [](const Array& U, const Array& h0, const Array& c0, const Array& xs) {
    auto step = [&](const std::pair<State, Array>& carry, const Array& x) {
      const State& s = carry.first;
      Array c = s.c * np::cos(x) + np::tanh(np::dot(U, s.h));
      Array h = np::sin(c) * s.h;
      return std::pair<std::pair<State, Array>, std::tuple<>>{{State{h, c}, carry.second + h}, {}};
    };
    auto [carry, none] = scan(step, std::pair<State, Array>{State{h0, c0}, h0 * 0.0}, xs);
    return np::sum(carry.first.h) + np::sum(carry.first.c * carry.second);
  };
  auto [gU, gh, gc, gx] = grad(loss, argnums<0, 1, 2, 3>)(U, h0, c0, xs);
  check_close(gU, numeric_grad([&](const Array& a) { return loss(a, h0, c0, xs); }, U));
  check_close(gh, numeric_grad([&](const Array& a) { return loss(U, a, c0, xs); }, h0));
  check_close(gc, numeric_grad([&](const Array& a) { return loss(U, h0, a, xs); }, c0));
  check_close(gx, numeric_grad([&](const Array& a) { return loss(U, h0, c0, a); }, xs));
}

TEST_CASE("scan: zero-length scans return the initial carry and empty ys") {
  Array h0 = cjax::array(std::vector<double>{1.0, -2.0}, Shape{2}, DType::f64);
  Array xs = np::zeros({0, 2}, DType::f64);
  auto loss = [](const Array& h0, const Array& xs) {
    auto step = [](const Array& h, const Array& x) {
      return std::pair<Array, Array>{np::sin(h) + x, h * x};
    };
    auto [h, ys] = scan(step, h0, xs);
    CHECK(ys.shape() == Shape{0, 2});
    return np::sum(h * h) + np::sum(ys);
  };
  CHECK(loss(h0, xs).item() == Approx(5.0));
  auto [gh, gx] = grad(loss, argnums<0, 1>)(h0, xs);
  CHECK(gh.to_vector<double>() == std::vector<double>{2.0, -4.0});
  CHECK(gx.shape() == Shape{0, 2});
}

TEST_CASE("scan: jvp matches finite differences (forward mode)") {
  std::mt19937 rng(7);
  Array W = random_f64(rng, {3, 4, 4}), b = random_f64(rng, {3, 4}), x = random_f64(rng, {4});
  Array tW = random_f64(rng, {3, 4, 4}), tb = random_f64(rng, {3, 4}), tx = random_f64(rng, {4});
  auto [y, ty] = jvp(net_loss, std::tuple{W, b, x}, std::tuple{tW, tb, tx});
  double h = 1e-6;
  double fp = net_loss(W + h * tW, b + h * tb, x + h * tx).item();
  double fm = net_loss(W - h * tW, b - h * tb, x - h * tx).item();
  CHECK(y.item() == Approx(net_loss(W, b, x).item()));
  CHECK(ty.item() == Approx((fp - fm) / (2 * h)).epsilon(1e-6));
}

TEST_CASE("scan: nested scans and an integer carry differentiate") {
  std::mt19937 rng(8);
  Array xs = random_f64(rng, {3, 4, 2}), h0 = random_f64(rng, {2});
  auto loss = [](const Array& h0, const Array& xs) {
    auto outer = [](const std::pair<Array, Array>& c, const Array& row) {
      auto inner = [](const Array& h, const Array& x) {
        return std::pair<Array, std::tuple<>>{np::sin(h * x + 0.5), {}};
      };
      Array h = scan(inner, c.first, row).first;
      Array count = c.second + 1;
      return std::pair<std::pair<Array, Array>, Array>{{h, count}, h * count.astype(DType::f64)};
    };
    auto [carry, ys] = scan(outer, std::pair<Array, Array>{h0, Array(0)}, xs);
    if (carry.second.is_concrete()) CHECK(carry.second.item<int>() == 3);
    return np::sum(carry.first) + np::sum(ys);
  };
  loss(h0, xs);  // eagerly: the integer carry counts the rows
  auto [gh, gx] = grad(loss, argnums<0, 1>)(h0, xs);
  check_close(gh, numeric_grad([&](const Array& a) { return loss(a, xs); }, h0));
  check_close(gx, numeric_grad([&](const Array& a) { return loss(h0, a); }, xs));
}

TEST_CASE("scan: a checkpointed body gives the same gradients") {
  std::mt19937 rng(9);
  Array W = random_f64(rng, {4, 3, 3}), b = random_f64(rng, {4, 3}, 0.1, 1.0),
        x = random_f64(rng, {3});
  auto ckpt = cjax::checkpoint(layer, policies::dots_with_no_batch_dims_saveable());
  auto loss_ckpt = [&](const Array& W, const Array& b, const Array& x) {
    return np::sum(np::tanh(scan(ckpt, x, WB{W, b}).first));
  };
  auto [gW, gb, gx] = grad(net_loss, argnums<0, 1, 2>)(W, b, x);
  auto [cW, cb, cx] = grad(loss_ckpt, argnums<0, 1, 2>)(W, b, x);
  check_close(cW, gW.to_vector<double>());
  check_close(cb, gb.to_vector<double>());
  check_close(cx, gx.to_vector<double>());
}

TEST_CASE("scan: a carry whose type changes is a TypeError, no length and no xs a UsageError") {
  Array x = cjax::array(std::vector<double>{1.0}, Shape{1}, DType::f64);
  auto bad = [](const Array& c, const std::tuple<>&) {
    return std::pair<Array, std::tuple<>>{np::concatenate(std::vector<Array>{c, c}, 0), {}};
  };
  CHECK_THROWS_AS(scan(bad, x, std::tuple<>{}, 2), TypeError);
  auto ok = [](const Array& c, const std::tuple<>&) {
    return std::pair<Array, std::tuple<>>{c, {}};
  };
  CHECK_THROWS_AS(scan(ok, x, std::tuple<>{}), UsageError);
}

TEST_CASE("scan: a policy of an enclosing checkpoint applies inside the scan") {
  std::mt19937 rng(10);
  Array W = random_f64(rng, {4, 3, 3}), b = random_f64(rng, {4, 3}, 0.1, 1.0),
        x = random_f64(rng, {3});
  auto [gW, gb, gx] = grad(net_loss, argnums<0, 1, 2>)(W, b, x);
  // What JAX 0.11.2's print_saved_residuals lists for jax.checkpoint(net_loss, policy) (f32 there):
  // the arguments the backward pass reads, then what the policy saves inside the loop, stacked
  // per layer. The carries are not stacked: the staged scan recomputes them from the saved dots.
  struct Case {
    PolicyRef policy;
    std::vector<std::string> saved;  // sorted avals
  };
  const std::vector<Case> cases{
      {policies::dots_with_no_batch_dims_saveable(),
       {"f64[3]", "f64[4,3,3]", "f64[4,3]", "f64[4,3]"}},
      {policies::dots_saveable(), {"f64[3]", "f64[4,3,3]", "f64[4,3]", "f64[4,3]"}},
      {policies::nothing_saveable(), {"f64[3]", "f64[4,3,3]", "f64[4,3]"}},
      // JAX 0.11.2 lists one f32[3] for the final tanh (its newer tanh jvp saves 1 - tanh^2
      // alone); cjax's rule, JAX's earlier one, saves tanh and 1 - tanh. The loop's part agrees.
      {policies::everything_saveable(),
       {"f64[3]", "f64[3]", "f64[3]", "f64[4,3,3]", "f64[4,3]", "f64[4,3]"}}};
  for (const Case& c : cases) {
    auto whole = cjax::checkpoint(net_loss, c.policy);
    auto [cW, cb, cx] = grad(whole, argnums<0, 1, 2>)(W, b, x);
    check_close(cW, gW.to_vector<double>());
    check_close(cb, gb.to_vector<double>());
    check_close(cx, gx.to_vector<double>());
    std::vector<SavedResidual> rs = saved_residuals(whole, {"W", "b", "x"})(W, b, x);
    std::vector<std::string> got;
    for (const SavedResidual& r : rs) got.push_back(r.aval.str_short());
    std::sort(got.begin(), got.end());
    CHECK(got == c.saved);
  }
}
