// cjax::optim against optax's arithmetic written out by hand (Adam's bias-corrected moments,
// AdamW's decoupled decay, SGD's trace, global-norm clipping, the warmup-cosine schedule), over a
// registered parameter struct; a jitted step with donated parameters and state equals the eager
// one; tree_map over several trees.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "cjax/api.h"

namespace optim_test {
struct Params {
  cjax::Array w, b;
};
CJAX_PYTREE(Params, w, b)
}  // namespace optim_test

namespace cjax {
namespace optim_test {

namespace jnp = cjax::numpy;
using ::optim_test::Params;

Params params() {
  return {array(std::vector<float>{0.5f, -1.0f, 2.0f}, Shape{3}), Array::scalar(0.25, DType::f32)};
}
Params grads_at(int step) {
  const float s = static_cast<float>(step + 1);
  return {array(std::vector<float>{0.1f * s, -0.2f, 0.3f / s}, Shape{3}),
          Array::scalar(-0.5 * s, DType::f32)};
}

std::vector<double> leaves_of(const Params& p) {
  std::vector<double> out = p.w.to_vector<double>();
  out.push_back(p.b.item());
  return out;
}

// Adam(W) by hand, every leaf as a double.
std::vector<double> adam_by_hand(int steps, double lr, double b1, double b2, double eps,
                                 double wd) {
  std::vector<double> p = leaves_of(params()), m(p.size(), 0), v(p.size(), 0);
  for (int t = 1; t <= steps; ++t) {
    const std::vector<double> g = leaves_of(grads_at(t - 1));
    for (size_t i = 0; i < p.size(); ++i) {
      m[i] = (1 - b1) * g[i] + b1 * m[i];
      v[i] = (1 - b2) * g[i] * g[i] + b2 * v[i];
      const double mh = m[i] / (1 - std::pow(b1, t)), vh = v[i] / (1 - std::pow(b2, t));
      p[i] += -lr * (mh / (std::sqrt(vh) + eps) + wd * p[i]);
    }
  }
  return p;
}

Params run(const optim::GradientTransformation& opt, int steps) {
  Params p = params();
  optim::OptState s = opt.init(p);
  for (int t = 0; t < steps; ++t) {
    auto [updates, next] = opt.update(grads_at(t), s, p);
    p = optim::apply_updates(p, updates);
    s = next;
  }
  return p;
}

// The optimizers compute in the parameters' f32, as optax does; the references in f64. Adam's
// bias correction 1 - 0.999^t alone is off by 1.3e-5 relative in f32 (0.999 is not exact).
void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == Approx(want[i]).epsilon(5e-5).margin(1e-6));
}

TEST_CASE("adam and adamw follow optax's arithmetic over a parameter struct") {
  check_close(leaves_of(run(optim::adam(0.1), 3)), adam_by_hand(3, 0.1, 0.9, 0.999, 1e-8, 0));
  check_close(leaves_of(run(optim::adamw(0.05, 0.8, 0.99, 1e-6, 0.1), 4)),
              adam_by_hand(4, 0.05, 0.8, 0.99, 1e-6, 0.1));
  const Params p = params();
  const optim::OptState s = optim::adam(0.1).init(p);
  CHECK(s.count.item() == 0);
  CHECK(s.mu.size() == 2);
}

TEST_CASE("sgd with momentum and Nesterov, clipping and chains") {
  auto by_hand = [](double lr, double momentum, bool nesterov, int steps) {
    std::vector<double> p = leaves_of(params()), trace(p.size(), 0);
    for (int t = 0; t < steps; ++t) {
      const std::vector<double> g = leaves_of(grads_at(t));
      for (size_t i = 0; i < p.size(); ++i) {
        trace[i] = g[i] + momentum * trace[i];
        p[i] -= lr * (nesterov ? g[i] + momentum * trace[i] : trace[i]);
      }
    }
    return p;
  };
  check_close(leaves_of(run(optim::sgd(0.1), 2)), by_hand(0.1, 0.0, false, 2));
  check_close(leaves_of(run(optim::sgd(0.1, 0.9), 3)), by_hand(0.1, 0.9, false, 3));
  check_close(leaves_of(run(optim::sgd(0.1, 0.9, true), 3)), by_hand(0.1, 0.9, true, 3));
  // Gradients of global norm 5 clipped to 1; under the limit, unchanged.
  const Params g{array(std::vector<float>{3, 0, 0}, Shape{3}), Array::scalar(4, DType::f32)};
  const auto clip = optim::clip_by_global_norm(1.0);
  auto [clipped, _] = clip.update(g, clip.init(g), g);
  CHECK(leaves_of(clipped)[0] == Approx(0.6));
  CHECK(leaves_of(clipped)[3] == Approx(0.8));
  auto [kept, __] = optim::clip_by_global_norm(10.0).update(g, clip.init(g), g);
  CHECK(leaves_of(kept) == leaves_of(g));
  CHECK(optim::global_norm(tree_leaves(g)).item() == Approx(5.0));
  const auto chained = optim::chain({optim::clip_by_global_norm(1.0), optim::sgd(1.0)});
  const optim::OptState cs = chained.init(g);
  CHECK(cs.inner.size() == 2);
  auto [u, next] = chained.update(g, cs, g);
  CHECK(leaves_of(u)[0] == Approx(-0.6));
  CHECK(next.count.item() == 1);
}

TEST_CASE("learning-rate schedules: linear warmup, then a cosine to the end value") {
  const auto schedule = optim::warmup_cosine_decay_schedule(0.0, 1.0, 10, 110, 0.1);
  auto at = [&](int32_t step) { return schedule(Array::scalar(step, DType::i32)).item(); };
  CHECK(at(0) == Approx(0.0));
  CHECK(at(5) == Approx(0.5));
  CHECK(at(10) == Approx(1.0));
  CHECK(at(60) == Approx(0.55));  // halfway: (1 - 0.1) * 0.5 + 0.1
  CHECK(at(110) == Approx(0.1));
  CHECK(at(500) == Approx(0.1));
  // A schedule drives the rate from the optimizer's own count.
  const auto opt = optim::sgd(optim::linear_schedule(1.0, 0.0, 2));
  Params p = params();
  optim::OptState s = opt.init(p);
  std::vector<double> rates;
  for (int t = 0; t < 3; ++t) {
    auto [u, next] = opt.update(grads_at(0), s, p);
    rates.push_back(-leaves_of(u)[3] / leaves_of(grads_at(0))[3]);
    s = next;
  }
  CHECK(rates[0] == Approx(1.0));
  CHECK(rates[1] == Approx(0.5));
  CHECK(rates[2] == Approx(0.0).margin(1e-12));
}

TEST_CASE("a jitted training step with donated parameters and state equals the eager one") {
  const Array x = jnp::reshape(jnp::arange(12.0f), {4, 3}) * 0.1f;
  const Array y = array(std::vector<float>{1, -1, 0.5f, 2}, Shape{4});
  auto loss = [&](const Params& p) {
    return jnp::mean(jnp::square(jnp::matmul(x, p.w) + p.b - y));
  };
  const auto opt =
      optim::chain({optim::clip_by_global_norm(1.0),
                    optim::adamw(optim::warmup_cosine_decay_schedule(0.0, 0.1, 3, 50))});
  auto step = [&](const Params& p, const optim::OptState& s) {
    auto [value, g] = value_and_grad(loss)(p);
    auto [updates, next] = opt.update(g, s, p);
    return std::tuple{optim::apply_updates(p, updates), next, value};
  };
  auto jitted = jit(step, donate_argnums(0, 1));
  Params pe = params(), pj = params();
  optim::OptState se = opt.init(pe), sj = opt.init(pj);
  double first = 0, last = 0;
  for (int t = 0; t < 30; ++t) {
    auto [p1, s1, l1] = step(pe, se);
    auto [p2, s2, l2] = jitted(pj, sj);
    pe = p1;
    se = s1;
    pj = p2;
    sj = s2;
    if (t == 0) first = l1.item();
    last = l1.item();
    CHECK(l2.item() == Approx(l1.item()).epsilon(1e-5));
  }
  check_close(leaves_of(pj), leaves_of(pe));
  CHECK(last < 0.8 * first);  // it learns
}

TEST_CASE("tree_map over several trees, tree_leaves and tree_structure") {
  const Params a = params(), b = grads_at(0);
  const Params sum = tree_map([](const Array& x, const Array& y) { return x + y; }, a, b);
  CHECK(sum.b.item() == Approx(-0.25));
  const Params three =
      tree_map([](const Array& x, const Array& y, const Array& z) { return x * y + z; }, a, b, a);
  CHECK(three.w.to_vector<float>()[0] == Approx(0.55f));
  CHECK(tree_leaves(a).size() == 2);
  CHECK(tree_structure(a) == tree_structure(b));
  const std::vector<Array> other{a.w};
  CHECK(tree_structure(other) != tree_structure(a));
  CHECK_THROWS_WITH(tree_map([](const Array& x, const Array& y) { return x + y; },
                             std::vector<Array>{a.w}, std::vector<Array>{a.w, a.w}),
                    Catch::Contains("tree 1 has another structure"));
}

}  // namespace optim_test
}  // namespace cjax
