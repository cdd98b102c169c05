// Transformations compose: grad of grad, hessians against closed forms, jacfwd against jacrev,
// grad inside make_jaxpr (emitting eqns into the outer trace, printed as JAX prints them), and
// grad of a function that itself calls grad on a closure over the outer argument.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

using namespace cjax;
using cjax::testing::f64;
using cjax::testing::random_f64;

namespace {

void check_all_close(const Array& a, const Array& b, double eps = 1e-10) {
  REQUIRE(a.shape() == b.shape());
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == Approx(y[i]).epsilon(eps).margin(eps));
}

}  // namespace

// def shifted_square_sum(x): shifted = x + 1.; squared = shifted * shifted; return jnp.sum(squared)
// print(jax.make_jaxpr(jax.grad(shifted_square_sum))(x))
TEST_CASE("make_jaxpr(grad(f)) prints as JAX: wild 02") {
  REQUIRE_WILD(expected, "02_jaxpathways_grad_add_any.jaxpr");
  auto shifted_square_sum = [](const Array& x) {
    Array shifted = x + 1.;
    Array squared = shifted * shifted;
    return np::sum(squared);
  };
  CHECK(to_string(make_jaxpr(grad(shifted_square_sum))(array({1.f, 2.f, 3.f}))) == expected);
}

// def f(x): return jax.numpy.sin(jax.numpy.cos(x)); jax.make_jaxpr(jax.grad(f))(3.0)
TEST_CASE("make_jaxpr(grad(f)) prints as JAX: wild 18") {
  REQUIRE_WILD(expected, "18_api_docstring_grad_dropvar.jaxpr");
  auto f = [](const Array& x) { return np::sin(np::cos(x)); };
  Jaxpr j = make_jaxpr(grad(f))(Array(3.0));  // a Python float: a weak-typed f32 scalar
  CHECK(to_string(j) == expected);
}

TEST_CASE("grad inside make_jaxpr stages into the outer trace and evaluates like grad") {
  auto f = [](const Array& x) { return np::sum(np::tanh(x) * np::exp(x)); };
  Array x = f64({0.1, -0.4, 0.8}, {3});
  Jaxpr j = make_jaxpr(grad(f))(x);
  CHECK(j.eqns.size() > 3);
  for (const Eqn& e : j.eqns) CHECK(e.prim->name != "remat2");
  std::vector<Array> out = eval_jaxpr(j, {}, std::vector<Array>{x});
  REQUIRE(out.size() == 1);
  check_all_close(out[0], grad(f)(x));
}

TEST_CASE("grad of grad against closed forms") {
  auto cube = [](const Array& x) { return x * x * x; };
  CHECK(grad(grad(cube))(Array::scalar(2.0, DType::f64)).item() == Approx(12.0));
  CHECK(grad(grad(grad(cube)))(Array::scalar(2.0, DType::f64)).item() == Approx(6.0));
  // d2/dx2 sin(cos x) = -sin(cos x) sin^2 x - cos(cos x) cos x
  auto f = [](const Array& x) { return np::sin(np::cos(x)); };
  double x = 0.7;
  double want =
      -std::sin(std::cos(x)) * std::sin(x) * std::sin(x) - std::cos(std::cos(x)) * std::cos(x);
  CHECK(grad(grad(f))(Array::scalar(x, DType::f64)).item() == Approx(want).epsilon(1e-12));
  // d2/dx2 exp(tanh x) = exp(tanh x) (sech^4 x - 2 tanh x sech^2 x)
  auto h = [](const Array& v) { return np::exp(np::tanh(v)); };
  double t = std::tanh(x), s2 = 1 - t * t;
  CHECK(grad(grad(h))(Array::scalar(x, DType::f64)).item() ==
        Approx(std::exp(t) * (s2 * s2 - 2 * t * s2)).epsilon(1e-12));
}

TEST_CASE("hessian against closed forms") {
  // f(x) = 0.5 x^T A x + sum(x^3): H = (A + A^T) / 2 + diag(6 x)
  std::mt19937 rng(7);
  Array A = random_f64(rng, {3, 3}), x = random_f64(rng, {3});
  auto f = [&](const Array& v) { return 0.5 * np::dot(v, np::dot(A, v)) + np::sum(v * v * v); };
  Array H = hessian(f)(x);
  REQUIRE(H.shape() == Shape{3, 3});
  std::vector<double> a = A.to_vector<double>(), xv = x.to_vector<double>(),
                      h = H.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double want = 0.5 * (a[i * 3 + j] + a[j * 3 + i]) + (i == j ? 6 * xv[i] : 0.0);
      CHECK(h[i * 3 + j] == Approx(want).epsilon(1e-12).margin(1e-12));
    }
  // Of a scalar function of a scalar: the second derivative, shape ().
  Array h0 = hessian([](const Array& v) { return np::sin(v) * v; })(Array::scalar(1.3, DType::f64));
  CHECK(h0.shape() == Shape{});
  CHECK(h0.item() == Approx(2 * std::cos(1.3) - 1.3 * std::sin(1.3)).epsilon(1e-12));
  // jacrev(jacfwd) agrees with jacfwd(jacrev).
  check_all_close(jacrev(jacfwd(f))(x), H);
}

TEST_CASE("jacfwd and jacrev agree on random functions") {
  std::mt19937 rng(8);
  Array W = random_f64(rng, {2, 3}), x = random_f64(rng, {3});
  auto f1 = [](const Array& v) {
    return np::stack({np::sin(v[0] * v[1]) + v[2], np::exp(v[0]) * np::tanh(v[2]), np::sum(v * v)});
  };
  Array J1 = jacfwd(f1)(x);
  CHECK(J1.shape() == Shape{3, 3});
  check_all_close(J1, jacrev(f1)(x));
  // A matrix argument: shape out + in = [2, 2, 3].
  auto f2 = [](const Array& w, const Array& v) { return np::tanh(np::dot(w, v)) * np::sum(w); };
  Array Jw = jacfwd(f2)(W, x);
  CHECK(Jw.shape() == Shape{2, 2, 3});
  check_all_close(Jw, jacrev(f2)(W, x));
  check_all_close(jacfwd(f2, argnums<1>)(W, x), jacrev(f2, 1)(W, x));
  // A linear function's Jacobian is its matrix.
  check_all_close(jacrev([&](const Array& v) { return np::dot(W, v); })(x), W);
  check_all_close(jacfwd([&](const Array& v) { return np::dot(W, v); })(x), W);
}

TEST_CASE("Jacobians of pytrees keep the pytree structure") {
  auto f = [](const std::vector<Array>& p) { return np::sum(p[0] * p[1]); };
  std::vector<Array> p{f64({1.0, 2.0}, {2}), f64({3.0, 4.0}, {2})};
  std::vector<Array> J = jacrev(f)(p);
  REQUIRE(J.size() == 2);
  CHECK(J[0].to_vector<double>() == std::vector<double>{3.0, 4.0});
  CHECK(J[1].to_vector<double>() == std::vector<double>{1.0, 2.0});
  auto g = [](const Array& v) { return std::make_pair(v * 2.0, np::sum(v)); };
  auto [Ja, Jb] = jacfwd(g)(f64({1.0, 2.0}, {2}));
  CHECK(Ja.shape() == Shape{2, 2});
  CHECK(Ja.to_vector<double>() == std::vector<double>{2.0, 0.0, 0.0, 2.0});
  CHECK(Jb.to_vector<double>() == std::vector<double>{1.0, 1.0});
  CHECK_THROWS_WITH(jacfwd([](const Array& v) { return v; })(array({1, 2})),
                    Catch::Contains("jacfwd requires real-valued inputs"));
}

TEST_CASE("grad of a function that calls grad on a closure over its argument") {
  // h(x) = d/dy [x sin y] at y = x = x cos x; h'(x) = cos x - x sin x.
  auto h = [](const Array& x) { return grad([&](const Array& y) { return x * np::sin(y); })(x); };
  double x = 0.9;
  Array xs = Array::scalar(x, DType::f64);
  CHECK(h(xs).item() == Approx(x * std::cos(x)).epsilon(1e-12));
  CHECK(grad(h)(xs).item() == Approx(std::cos(x) - x * std::sin(x)).epsilon(1e-12));
  // The same through make_jaxpr: one flat program, no nested calls.
  Jaxpr j = make_jaxpr(grad(h))(xs);
  std::vector<Array> out = eval_jaxpr(j, {}, std::vector<Array>{xs});
  CHECK(out.at(0).item() == Approx(std::cos(x) - x * std::sin(x)).epsilon(1e-12));
}

TEST_CASE("jvp of grad and vjp of jvp (forward-over-reverse, reverse-over-forward)") {
  auto f = [](const Array& v) { return np::sum(np::sin(v) * v); };
  Array x = f64({0.3, 1.1}, {2}), t = f64({1.0, 0.0}, {2});
  // Hessian-vector product both ways.
  auto [g, hvp] = jvp(grad(f), x, t);
  auto jvp_of_f = [&](const Array& v) { return std::get<1>(jvp(f, v, t)); };
  Array hvp2 = grad(jvp_of_f)(x);
  check_all_close(hvp, hvp2);
  CHECK(hvp.to_vector<double>()[0] == Approx(2 * std::cos(0.3) - 0.3 * std::sin(0.3)));
  CHECK(hvp.to_vector<double>()[1] == Approx(0.0).margin(1e-14));
  check_all_close(g, grad(f)(x));
}
