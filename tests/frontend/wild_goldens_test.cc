// C++ programs equivalent to the Python programs behind real JAX printouts (the wild-jaxprs
// corpus in the shared reference folder); make_jaxpr must reproduce the printed text exactly.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cjax/api.h"
#include "tests/golden/golden.h"

using namespace cjax;

// def shifted_square_sum(x): shifted = x + 1.; squared = shifted * shifted; return jnp.sum(squared)
TEST_CASE("wild 01: shifted_square_sum") {
  REQUIRE_WILD(expected, "01_jaxpathways_forward_reduce_sum.jaxpr");
  auto shifted_square_sum = [](const Array& x) {
    Array shifted = x + 1.;
    Array squared = shifted * shifted;
    return np::sum(squared);
  };
  CHECK(to_string(make_jaxpr(shifted_square_sum)(array({1.f, 2.f, 3.f}))) == expected);
}

// offset = jnp.array([1., 2., 3.]); def captured(z): return jnp.sum(z + offset)
TEST_CASE("wild 03: a closure over a concrete array becomes a constvar") {
  REQUIRE_WILD(expected, "03_jaxpathways_constvar_closure.jaxpr");
  Array offset = array({1.f, 2.f, 3.f});
  auto captured = [&](const Array& z) { return np::sum(z + offset); };
  Jaxpr j = make_jaxpr(captured)(array({1.f, 2.f, 3.f}));
  CHECK(to_string(j) == expected);
  REQUIRE(j.consts.size() == 1);
  CHECK(runtime::Buffer::from_const(j.consts[0]).to_doubles() == std::vector<double>{1, 2, 3});
}

// def f(x): return jnp.exp(jnp.tanh(x)); make_jaxpr(f)(jnp.ones(5)).jaxpr
TEST_CASE("wild 12: one-line jaxpr") {
  REQUIRE_WILD(expected, "12_docs_oneliner_tanh_exp.jaxpr");
  auto fn = [](const Array& x) { return np::exp(np::tanh(x)); };
  CHECK(to_string(make_jaxpr(fn)(np::ones({5}))) == expected);
}

// qk_norm_rope (jax 0.11): RMS norm over the last axis, then rotary embedding of the two halves.
//   ms = jnp.mean(jnp.square(query), axis=-1, keepdims=True)
//   x = query * jax.lax.rsqrt(ms + EPS) * gamma
//   x1, x2 = x[..., :64], x[..., 64:]
//   c, s = cos[None, :, None, :], sin[None, :, None, :]
//   return jnp.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
TEST_CASE("wild 14: qk_norm_rope") {
  REQUIRE_WILD(expected, "14_qk_norm_rope_jax011.jaxpr");
  auto qk_norm_rope = [](const Array& query, const Array& gamma, const Array& cos,
                         const Array& sin) {
    const double EPS = 1e-6;
    Array ms = np::mean(np::square(query), -1, /*keepdims=*/true);
    Array x = query * lax::rsqrt(ms + EPS);
    x = x * gamma;
    Array x1 = x[{ellipsis, slice(std::nullopt, 64)}];
    Array x2 = x[{ellipsis, slice(64, std::nullopt)}];
    Array c = cos[{newaxis, all, newaxis, all}];
    Array s = sin[{newaxis, all, newaxis, all}];
    // C++ leaves the order of the operands of `+` and `-` unspecified (g++ evaluates the right one
    // first), so the products are named to stage them in Python's left-to-right order.
    Array x1c = x1 * c, x2s = x2 * s;
    Array first = x1c - x2s;
    Array x2c = x2 * c, x1s = x1 * s;
    Array second = x2c + x1s;
    return np::concatenate({first, second}, -1);
  };
  Jaxpr j = make_jaxpr(qk_norm_rope)(
      ShapeDtype{DType::f32, {2, 32, 4, 128}}, ShapeDtype{DType::f32, {128}},
      ShapeDtype{DType::f32, {32, 64}}, ShapeDtype{DType::f32, {32, 64}});
  CHECK(to_string(j) == expected);
}

// @jax.custom_jvp def f(x): return x + 1.;  f.defjvp(f_jvp)  (a rule named f_jvp)
TEST_CASE("wild 25: a custom_jvp function") {
  REQUIRE_WILD(expected, "25_custom_jvp_call.jaxpr");
  auto f = custom_jvp([](const Array& x) { return x + 1.; }, "f");
  f.defjvp(
      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
        return std::pair{std::get<0>(p) + 1., std::get<0>(t)};
      },
      "f_jvp");
  CHECK(to_string(make_jaxpr([&](const Array& x) { return f(x); })(array({1.f}))) == expected);
}

// @jax.custom_vjp def f(x): return x + 1.;  f.defvjp(f_fwd, f_bwd)
TEST_CASE("wild 26: a custom_vjp function") {
  REQUIRE_WILD(expected, "26_custom_vjp_call.jaxpr");
  auto f = custom_vjp([](const Array& x) { return x + 1.; }, "f");
  f.defvjp(
      [](const Array& x) {
        return std::pair{x + 1., std::tuple<>{}};
      },
      [](const std::tuple<>&, const Array& g) { return g; }, "f_fwd", "f_bwd");
  CHECK(to_string(make_jaxpr([&](const Array& x) { return f(x); })(array({1.f}))) == expected);
}
