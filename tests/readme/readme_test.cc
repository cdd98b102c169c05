// The C++ shown in README.md, compiled and run: its code block is this file's code between the
// markers (tests/cli/docs_test.cc checks that the README quotes it verbatim), after nothing but
// `#include <cjax/cjax.h>`, as a user of the installed library writes it.
// ---- README.md ----
#include <cjax/cjax.h>

namespace np = cjax::numpy;
using cjax::Array;

Array g(const Array& W, const Array& x) {
  return np::sin(np::dot(W, x));
}
Array f(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  return g(W3, g(W2, g(W1, x)));
}
Array loss_fn(const std::vector<Array>& params, const Array& x, const Array& y) {
  return np::sum(np::power(f(params[0], params[1], params[2], x) - y, 2));
}

void tour(const Array& W1, const Array& W2, const Array& W3, const Array& x, const Array& y) {
  auto jaxpr = cjax::make_jaxpr(f, {"W1", "W2", "W3", "x"})(W1, W2, W3, x);
  std::cout << cjax::to_string(jaxpr) << "\n";
  std::vector<Array> params = {W1, W2, W3};
  auto [loss, grads] = cjax::value_and_grad(loss_fn, cjax::argnums<0>)(params, x, y);
  auto f3 = cjax::checkpoint(f, cjax::policies::dots_with_no_batch_dims_saveable());
  cjax::print_saved_residuals(f3, {"W1", "W2", "W3", "x"})(W1, W2, W3, x);
  auto step = cjax::jit(cjax::value_and_grad(loss_fn, cjax::argnums<0>));  // compiled once, cached
  auto [loss_jit, grads_jit] = step(params, x, y);
  auto per_example = cjax::vmap(loss_fn, {std::nullopt, 0, 0});  // params shared, x and y mapped
  Array losses = per_example(params, np::stack({x, x}), np::stack({y, y}));
  auto clip = cjax::custom_vjp([](const Array& v) { return v; }, "clip_gradient");  // custom rule
  clip.defvjp(
      [](const Array& v) {
        return std::pair{v, std::tuple<>{}};
      },
      [](const std::tuple<>&, const Array& ct) { return np::clip(ct, -1.0, 1.0); });
  Array clipped = cjax::grad([&](const Array& v) { return np::sum(clip(v) * 3.0); })(x);
  Array key = cjax::random::key(0);  // explicit PRNG keys: JAX's threefry, bit for bit
  Array noise = cjax::random::normal(cjax::random::split(key, 2)[1], {4});
  auto noisy = cjax::checkpoint([&](const Array& v) {  // the mask is recomputed, never saved
    return np::sum(cjax::nn::dropout(key, 0.5, np::tanh(v + noise)));
  });
  Array noisy_grad = cjax::jit(cjax::grad(noisy))(x);
  auto integrate = [](const Array& a, const Array& h0) {  // 1000 steps, 8 carries kept for grad
    auto euler = [&](const Array& h, const std::tuple<>&) {
      return std::pair{h + 0.01 * np::tanh(a * h), std::tuple<>{}};
    };
    auto schedule = cjax::scan_schedules::binomial(8);
    return np::sum(
        cjax::scan(euler, h0, std::tuple<>{}, {.length = 1000, .checkpoint = schedule}).first);
  };
  Array dintegrate = cjax::grad(integrate)(x, x);
  auto newton_sqrt = [](const Array& a) {  // a data-dependent trip count, bounded: reversible
    return cjax::while_loop([&](const Array& r) { return np::max(np::abs(r * r - a)) > 1e-6; },
                            [&](const Array& r) { return 0.5 * (r + a / r); }, np::ones_like(a),
                            {.max_iters = 50});
  };
  Array dsqrt = cjax::grad([&](const Array& a) { return np::sum(newton_sqrt(a)); })(y + 2.0);
  std::cout << "loss " << loss << " (jit: " << loss_jit << ", vmap: " << losses << ")\n"
            << "clipped: " << clipped << "\n"
            << "dropout grad: " << noisy_grad << "\n"
            << "d integrate / da: " << dintegrate << ", d sqrt(a) / da: " << dsqrt << "\n";
}
// ---- end of README.md ----

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "tests/golden/golden.h"

TEST_CASE("the README's C++ compiles against <cjax/cjax.h> and runs") {
  Array W1 = np::ones({5, 4}) * 0.1, W2 = np::ones({6, 5}) * 0.2, W3 = np::ones({7, 6}) * 0.3;
  Array x = np::arange(4.0), y = np::ones({7});
  std::ostringstream out;
  std::streambuf* saved = std::cout.rdbuf(out.rdbuf());
  try {
    tour(W1, W2, W3, x, y);
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  std::string text = out.str();
  INFO(text);
  CHECK(text.rfind("{ lambda ; a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4]. let\n", 0) == 0);
  // f3 = checkpoint(f, dots_with_no_batch_dims_saveable) saves the dots' outputs.
  CHECK(text.find("f32[5] output of dot_general from tests/readme/readme_test.cc:") !=
        std::string::npos);
  CHECK(text.find("sin from") == std::string::npos);
  // The loss eagerly and through jit agree: `loss Array(X, dtype=float32) (jit: Array(Y, ...))`.
  size_t eager = text.rfind("loss Array("), jit = text.rfind("(jit: Array(");
  REQUIRE(eager != std::string::npos);
  REQUIRE(jit != std::string::npos);
  double loss = std::stod(text.substr(eager + 11)), loss_jit = std::stod(text.substr(jit + 12));
  CHECK(loss > 0);
  CHECK(loss_jit == Approx(loss).epsilon(1e-5));
  // Both examples of the vmapped batch are (x, y): two copies of the loss.
  const size_t batched = text.rfind("vmap: Array([");
  REQUIRE(batched != std::string::npos);
  CHECK(std::stod(text.substr(batched + 13)) == Approx(loss).epsilon(1e-5));
  // The custom_vjp's bwd clips the gradient of sum(3 v) to 1.
  CHECK(text.find("clipped: Array([1., 1., 1., 1.], dtype=float32)") != std::string::npos);
  // dropout(0.5) keeps each element with its gradient doubled, or zeroes it.
  const size_t dropped = text.rfind("dropout grad: Array([");
  REQUIRE(dropped != std::string::npos);
  const size_t open = dropped + 20, close = text.find(']', open);
  const std::vector<double> g = golden::numbers(text.substr(open, close - open));
  REQUIRE(g.size() == 4);
  const Array noise = cjax::random::normal(cjax::random::split(cjax::random::key(0), 2)[1], {4});
  size_t kept = 0;
  for (size_t i = 0; i < 4; ++i) {
    const double z = double(i) + noise.buffer().as<float>()[i];
    const double want = 2.0 / (std::cosh(z) * std::cosh(z));
    CHECK((g[i] == 0.0 || g[i] == Approx(want).epsilon(1e-4)));
    kept += g[i] != 0.0;
  }
  CHECK(kept > 0);
  // Newton's iteration for sqrt(3), reversed through the bounded while loop: 1 / (2 sqrt(3)).
  const size_t sqrt_grad = text.rfind("d sqrt(a) / da: Array([");
  REQUIRE(sqrt_grad != std::string::npos);
  CHECK(std::stod(text.substr(sqrt_grad + 23)) == Approx(0.5 / std::sqrt(3.0)).epsilon(1e-5));
  // The integrator's gradient at a = 0 is 0 (h stays 0 for the first element, and tanh(0) = 0).
  const size_t integrate = text.rfind("d integrate / da: Array([");
  REQUIRE(integrate != std::string::npos);
  CHECK(std::stod(text.substr(integrate + 25)) == 0.0);
}
