// grad, value_and_grad, vjp, jvp and linearize on small functions with known derivatives:
// argnums, has_aux, pytrees, integer inputs, static arguments and error messages.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::f64;
using cjax::testing::sin_sin;

namespace gradtest {
struct Dense {
  Array w, b;
  int width = 0;
};
CJAX_PYTREE(Dense, w, b, width)
}  // namespace gradtest

namespace {

std::vector<double> values(const Array& a) {
  return a.to_vector<double>();
}

}  // namespace

TEST_CASE("value_and_grad of sin(sin(x)) at 2.0 matches JAX in f32") {
  auto [value, g] = value_and_grad(sin_sin)(2.0);
  CHECK(value.dtype() == DType::f32);
  CHECK(g.dtype() == DType::f32);
  CHECK(value.item() == Approx(0.78907233).epsilon(1e-6));
  CHECK(g.item() == Approx(-0.2556391).epsilon(1e-6));
  // grad alone, and on a strongly typed scalar.
  CHECK(grad(sin_sin)(array(2.0f)).item() == Approx(-0.2556391).epsilon(1e-6));
}

TEST_CASE("grad of elementwise and reducing functions") {
  Array x = f64({0.5, -1.0, 2.0}, {3});
  Array g = grad([](const Array& v) { return np::sum(v * v * v); })(x);
  CHECK(g.dtype() == DType::f64);
  CHECK(values(g) == std::vector<double>{0.75, 3.0, 12.0});
  // Constant output: the gradient is zero.
  Array z = grad([](const Array& v) { return np::sum(v) * 0.0 + 1.0; })(x);
  CHECK(values(z) == std::vector<double>{0.0, 0.0, 0.0});
  Array c = grad([](const Array&) { return Array::scalar(3.0, DType::f32); })(array({1.f, 2.f}));
  CHECK(values(c) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("argnums selects positional arguments") {
  auto f = [](const Array& x, const Array& y) { return np::sum(x * y * y); };
  Array x = f64({1.0, 2.0}, {2}), y = f64({3.0, 4.0}, {2});
  CHECK(values(grad(f)(x, y)) == std::vector<double>{9.0, 16.0});
  CHECK(values(grad(f, argnums<1>)(x, y)) == std::vector<double>{6.0, 16.0});
  CHECK(values(grad(f, 1)(x, y)) == std::vector<double>{6.0, 16.0});
  CHECK(values(grad(f, -1)(x, y)) == std::vector<double>{6.0, 16.0});
  auto [gx, gy] = grad(f, argnums<0, 1>)(x, y);
  CHECK(values(gx) == std::vector<double>{9.0, 16.0});
  CHECK(values(gy) == std::vector<double>{6.0, 16.0});
  std::vector<Array> both = grad(f, {1, 0})(x, y);
  REQUIRE(both.size() == 2);
  CHECK(values(both[0]) == std::vector<double>{6.0, 16.0});
  CHECK(values(both[1]) == std::vector<double>{9.0, 16.0});
  CHECK_THROWS_AS(grad(f, 2)(x, y), UsageError);
  CHECK_THROWS_WITH(grad(f, 2)(x, y), Catch::Contains("argnums 2 is out of range"));
}

TEST_CASE("grad with respect to one argument does not differentiate the others") {
  // y is a constant of the differentiation: sin(y), which d/dy cos(y) needs, is never computed.
  auto f = [](const Array& x, const Array& y) { return np::sum(np::sin(x) * np::cos(y)); };
  Jaxpr j = make_jaxpr(grad(f))(array({1.f, 2.f}), array({3.f, 4.f}));
  REQUIRE(j.outvars.size() == 1);
  const Var& y = j.invars[1];
  size_t sin_of_y = 0;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == "sin" && e.inputs[0].is_var() && e.inputs[0].var() == y) ++sin_of_y;
  CHECK(sin_of_y == 0);
  // With both arguments selected it is.
  Jaxpr both = make_jaxpr(grad(f, argnums<0, 1>))(array({1.f, 2.f}), array({3.f, 4.f}));
  size_t sin_of_y2 = 0;
  for (const Eqn& e : both.eqns)
    if (e.prim->name == "sin" && e.inputs[0].is_var() && e.inputs[0].var() == both.invars[1])
      ++sin_of_y2;
  CHECK(sin_of_y2 == 1);
}

TEST_CASE("static arguments pass through grad unchanged") {
  auto f = [](const Array& x, double scale, bool square) {
    return square ? np::sum(x * x) * scale : np::sum(x) * scale;
  };
  Array x = f64({1.0, 2.0}, {2});
  CHECK(values(grad(f)(x, 3.0, true)) == std::vector<double>{6.0, 12.0});
  CHECK(values(grad(f)(x, 3.0, false)) == std::vector<double>{3.0, 3.0});
}

TEST_CASE("value_and_grad with has_aux returns ((value, aux), grad)") {
  auto loss = [](const Array& w, const Array& x) {
    Array pred = w * x;
    Array l = np::sum(pred * pred);
    return std::make_pair(l, std::map<std::string, Array>{{"pred", pred}});
  };
  Array w = f64({2.0}, {1}), x = f64({3.0}, {1});
  auto [value_aux, g] = value_and_grad(loss, argnums<0>, has_aux)(w, x);
  auto& [value, aux] = value_aux;
  CHECK(value.item() == 36.0);
  CHECK(values(aux.at("pred")) == std::vector<double>{6.0});
  CHECK(values(g) == std::vector<double>{36.0});  // 2 w x^2
  auto [g2, aux2] = grad(loss, 0, has_aux)(w, x);
  CHECK(values(g2) == std::vector<double>{36.0});
  CHECK(values(aux2.at("pred")) == std::vector<double>{6.0});
}

TEST_CASE("grad requires one scalar floating point output") {
  auto vec = [](const Array& x) { return x * 2.0; };
  CHECK_THROWS_AS(grad(vec)(array({1.f, 2.f, 3.f})), TypeError);
  CHECK_THROWS_WITH(grad(vec)(array({1.f, 2.f, 3.f})), Catch::Contains("scalar-output") &&
                                                           Catch::Contains("(3,)") &&
                                                           Catch::Contains("f32[3]"));
  auto two = [](const Array& x) { return std::make_tuple(np::sum(x), np::sum(x)); };
  CHECK_THROWS_WITH(grad(two)(array({1.f})), Catch::Contains("2 Array leaves"));
  auto integer = [](const Array& x) { return np::sum(x).astype(DType::i32); };
  CHECK_THROWS_AS(grad(integer)(array({1.f, 2.f})), TypeError);
  CHECK_THROWS_WITH(grad(integer)(array({1.f, 2.f})),
                    "grad requires real-valued outputs (output dtype that is a sub-dtype of "
                    "np.floating), but got int32. For differentiation of functions with integer "
                    "outputs, use vjp directly.");
  auto boolean = [](const Array& x) { return np::sum(x) > 0.0; };
  CHECK_THROWS_WITH(value_and_grad(boolean)(array({1.f})),
                    Catch::StartsWith("value_and_grad requires real-valued outputs") &&
                        Catch::Contains("but got bool."));
}

TEST_CASE("grad rejects integer and bool arguments unless allow_int, as JAX") {
  auto scaled = [](const Array& x, const Array& n) { return np::sum(x * n.astype(DType::f32)); };
  Array x = array({1.f, 2.f}), n = array({3, 4});
  const std::string jax_message =
      "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
      "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use vjp "
      "or set allow_int to True.";
  CHECK_THROWS_AS(grad(scaled, argnums<1>)(x, n), TypeError);
  CHECK_THROWS_WITH(grad(scaled, argnums<1>)(x, n), jax_message);
  CHECK_THROWS_WITH(grad(scaled, std::vector<int>{0, 1})(x, n), jax_message);
  CHECK_THROWS_WITH(grad(scaled, argnums<0, 1>)(x, array({true, false})),
                    Catch::Contains("but got bool."));
  // A C++ integer is a weak i32 (JAX's Python int): grad(f)(1) is the same TypeError.
  auto square = [](const Array& v) { return v * v; };
  CHECK_THROWS_WITH(grad(square)(1), jax_message);
  CHECK(grad(square)(1.5).item() == 3.0);
  // Not selected: an integer argument is a constant, as before.
  CHECK(values(grad(scaled, argnums<0>)(x, n)) == std::vector<double>{3.0, 4.0});
  // allow_int (in any order with has_aux): the integer argument's gradient is zeros of its own
  // dtype and shape (JAX's are float0).
  auto [gx, gn] = grad(scaled, argnums<0, 1>, allow_int)(x, n);
  CHECK(values(gx) == std::vector<double>{3.0, 4.0});
  CHECK(gn.aval().str_short() == "i32[2]");
  CHECK(values(gn) == std::vector<double>{0.0, 0.0});
  auto with_aux = [&](const Array& v, const Array& k) { return std::make_pair(scaled(v, k), k); };
  auto [value, grads] = value_and_grad(with_aux, argnums<1>, allow_int, has_aux)(x, n);
  CHECK(value.first.item() == 11.0);
  CHECK(values(grads) == std::vector<double>{0.0, 0.0});
  std::vector<Array> g_list = grad(scaled, std::vector<int>{1}, allow_int)(n, n);
  REQUIRE(g_list.size() == 1);
  CHECK(g_list[0].dtype() == DType::i32);
}

TEST_CASE("gradients of pytree arguments have the arguments' structure") {
  gradtest::Dense layer{f64({1.0, 2.0}, {2}), f64({0.5}, {1}), 7};
  std::vector<Array> xs{f64({1.0, 1.0}, {2}), f64({2.0, 3.0}, {2})};
  auto loss = [](const gradtest::Dense& p, const std::vector<Array>& batch) {
    Array total = Array::scalar(0.0, DType::f64);
    for (const Array& x : batch) {
      Array y = np::sum(p.w * x) + np::sum(p.b);
      total = total + y * y;
    }
    return total * static_cast<double>(p.width);
  };
  gradtest::Dense g = grad(loss)(layer, xs);
  // y1 = 3.5, y2 = 8.5; dL/dw = 7 * 2 (y1 x1 + y2 x2); dL/db = 7 * 2 (y1 + y2)
  CHECK(g.width == 7);
  CHECK(values(g.w) == std::vector<double>{14 * (3.5 + 17.0), 14 * (3.5 + 25.5)});
  CHECK(values(g.b) == std::vector<double>{14 * 12.0});
  auto [gl, gx] = grad(loss, argnums<0, 1>)(layer, xs);
  REQUIRE(gx.size() == 2);
  CHECK(values(gx[1]) == std::vector<double>{14 * 8.5 * 1.0, 14 * 8.5 * 2.0});
}

TEST_CASE("integer inputs get zero cotangents") {
  auto f = [](const Array& x, const Array& n) { return np::sum(x * n.astype(DType::f32)); };
  auto [y, f_vjp] = vjp(f, array({1.f, 2.f}), array({3, 4}));
  CHECK(y.item() == 11.0);
  auto [dx, dn] = f_vjp(Array(1.0f));
  CHECK(values(dx) == std::vector<double>{3.0, 4.0});
  CHECK(dn.dtype() == DType::i32);
  CHECK(values(dn) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("vjp returns the outputs and a backward function holding the residuals") {
  auto f = [](const Array& W, const Array& x) { return np::sin(np::dot(W, x)); };
  Array W = f64({1, 2, 3, 4, 5, 6}, {2, 3}), x = f64({0.1, 0.2, 0.3}, {3});
  auto [y, f_vjp] = vjp(f, W, x);
  std::vector<double> yv = values(y);
  REQUIRE(yv.size() == 2);
  CHECK(yv[0] == Approx(std::sin(1.4)));
  CHECK(yv[1] == Approx(std::sin(3.2)));
  // Residuals: W and x (arguments first), then cos(W x).
  REQUIRE(f_vjp.residuals().size() == 3);
  CHECK(f_vjp.residuals()[2].is_concrete());
  auto [dW, dx] = f_vjp(f64({1.0, 0.0}, {2}));
  CHECK(values(dx)[0] == Approx(std::cos(1.4) * 1.0));
  CHECK(values(dW)[2] == Approx(std::cos(1.4) * 0.3));
  CHECK(values(dW)[3] == Approx(0.0));
  CHECK_THROWS_WITH(f_vjp(f64({1.0, 0.0, 0.0}, {3})),
                    Catch::Contains("cotangent 0 has type f64[3], expected f64[2]"));
}

TEST_CASE("the backward function keeps the residuals, not the primals") {
  Array x = f64({0.1, 0.2, 0.3}, {3});
  auto [y, f_vjp] = vjp([](const Array& v) { return np::sin(v); }, x);
  REQUIRE(f_vjp.residuals().size() == 1);  // cos(x)
  CHECK(x.impl().use_count() == 1);        // nothing but this test holds x
  auto [dx] = f_vjp(f64({1.0, 1.0, 1.0}, {3}));
  CHECK(dx.to_vector<double>()[2] == Approx(std::cos(0.3)));
}

TEST_CASE("vjp_with_aux returns (output, backward function, aux)") {
  auto f = [](const Array& x) { return std::make_pair(x * 3.0, np::sum(x)); };
  auto [y, f_vjp, aux] = vjp_with_aux(f, f64({1.0, 2.0}, {2}));
  CHECK(values(y) == std::vector<double>{3.0, 6.0});
  CHECK(aux.item() == 3.0);
  auto [dx] = f_vjp(f64({1.0, 1.0}, {2}));
  CHECK(values(dx) == std::vector<double>{3.0, 3.0});
}

TEST_CASE("jvp pushes tangents forward") {
  auto f = [](const Array& x, const Array& y) { return std::make_tuple(x * y, np::sin(x)); };
  auto [out, tan] =
      jvp(f, std::make_tuple(Array(2.0), Array(3.0)), std::make_tuple(Array(1.0), Array(0.5)));
  CHECK(std::get<0>(out).item() == 6.0);
  CHECK(std::get<0>(tan).item() == Approx(3.0 + 2.0 * 0.5));
  CHECK(std::get<1>(tan).item() == Approx(std::cos(2.0)).epsilon(1e-6));
  auto [y, t] = jvp(sin_sin, Array(2.0), Array(1.0));
  CHECK(t.item() == Approx(-0.2556391).epsilon(1e-6));
  // An output that does not depend on the input gets a zero tangent.
  auto [c, tc] = jvp([](const Array&) { return array({1.f, 2.f}); }, Array(2.0), Array(1.0));
  CHECK(values(tc) == std::vector<double>{0.0, 0.0});
  CHECK_THROWS_WITH(jvp(sin_sin, array({1.f, 2.f}), array({1.f})),
                    Catch::Contains("tangent 0 has type f32[1], expected f32[2]"));
}

TEST_CASE("linearize evaluates the forward program once and the linear one per call") {
  auto f = [](const Array& x) { return np::exp(x) * 2.0; };
  auto [y, f_jvp] = linearize(f, f64({0.0, 1.0}, {2}));
  CHECK(values(y)[1] == Approx(2.0 * std::exp(1.0)));
  CHECK(values(f_jvp(f64({1.0, 1.0}, {2})))[1] == Approx(2.0 * std::exp(1.0)));
  CHECK(values(f_jvp(f64({2.0, 0.0}, {2})))[0] == Approx(4.0));
  auto g = [](const Array& x, const Array& k) { return x * k.astype(DType::f64); };
  auto [z, g_jvp] = linearize(g, f64({1.0}, {1}), array({5}));
  CHECK(values(g_jvp(f64({1.0}, {1}), array({0})))[0] == 5.0);
}
