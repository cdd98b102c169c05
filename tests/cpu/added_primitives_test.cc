// erf_inv, stop_gradient, sort (with rev), the shifts, population_count and bitcast_convert_type:
// each printed as jax 0.11.2 printed the same programs
// (tests/golden/jax_0_11_2/new_prims.md), computed as JAX computes it, differentiated, and run
// compiled with the interpreter's results.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "cjax/api.h"
#include "cjax/bind.h"
#include "compiler/cpu/cpu_backend.h"
#include "ir/parse/parser.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace {

namespace jnp = cjax::numpy;
using testing::f32;

std::string golden_case(const std::string& title) {
  return golden::jax_case("new_prims.md", title);
}

template <class F, class... A>
std::string trace(F f, const A&... a) {
  return to_string(make_jaxpr(f)(a...));
}

Array f32_array(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Array::from_buffer(runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {n}), v));
}

// A rank-1 array of dtype `t` holding `v` (exact for integers below 2^53).
Array typed(std::vector<double> v, DType t) {
  const auto n = static_cast<int64_t>(v.size());
  return array(v, Shape{n}, t);
}

// Central differences of a scalar function of x, in float64.
std::vector<double> finite_difference(const std::function<Array(const Array&)>& f,
                                      std::vector<double> x, double h = 1e-6) {
  std::vector<double> g(x.size());
  const Shape shape{static_cast<int64_t>(x.size())};
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> up = x, down = x;
    up[i] += h;
    down[i] -= h;
    g[i] = (f(testing::f64(up, shape)).item() - f(testing::f64(down, shape)).item()) / (2 * h);
  }
  return g;
}

}  // namespace

TEST_CASE("erf_inv prints, differentiates and jvps as JAX's") {
  auto f = [](const Array& x) { return lax::erf_inv(x); };
  CHECK(trace(f, f32({3})) == golden_case("erf_inv jaxpr"));
  // At a float32 argument (at a Python float, a weak type, JAX keeps the constant unrounded).
  auto scalar = [](const Array& x) { return lax::erf_inv(x); };
  CHECK(trace(grad(scalar), f32({})) == golden_case("erf_inv grad jaxpr at float32"));
  auto jvp_f = [](const Array& x, const Array& t) {
    auto [y, ty] = jvp([](const Array& a) { return lax::erf_inv(a); }, x, t);
    return std::make_tuple(y, ty);
  };
  CHECK(trace(jvp_f, f32({3}), f32({3})) == golden_case("erf_inv jvp jaxpr"));
}

TEST_CASE("erf_inv's values: JAX's in float32, erf's inverse in float64, infinite at ±1") {
  // jax 0.11.2's erf_inv at these points (new_prims.md, "erf_inv values").
  const std::vector<float> x{-0.9f, -0.5f, 0.0f, 0.25f, 0.75f, 0.999f};
  const std::vector<double> jax{-1.163087, -0.47693628, 0.0, 0.22531207, 0.8134198, 2.3267577};
  UseInterpreter interp;
  std::vector<float> got = lax::erf_inv(f32_array(x)).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) CHECK(got[i] == Approx(jax[i]).epsilon(2e-6).margin(1e-7));
  // float64: erf(erf_inv(y)) == y to a few ulps.
  std::mt19937 rng(7);
  Array y = testing::random_f64(rng, {64}, -0.999999, 0.999999);
  std::vector<double> back = jnp::erf(lax::erf_inv(y)).to_vector<double>();
  std::vector<double> yv = y.to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i)
    CHECK(back[i] == Approx(yv[i]).epsilon(1e-14).margin(1e-15));
  // The edges: ±1 give ±inf, beyond gives NaN.
  std::vector<float> edges = lax::erf_inv(f32_array({1.0f, -1.0f, 1.5f})).to_vector<float>();
  CHECK(edges[0] == std::numeric_limits<float>::infinity());
  CHECK(edges[1] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(edges[2]));
}

TEST_CASE("erf_inv compiled agrees with the interpreter, edges included") {
  std::vector<float> v;
  for (int i = -1000; i <= 1000; ++i) v.push_back(static_cast<float>(i) / 1000.0f);
  v.push_back(1.5f);
  Array x = f32_array(v);
  auto f = [](const Array& a) { return lax::erf_inv(a) * 2.0; };
  Array compiled = jit(f)(x);
  UseInterpreter interp;
  Array interpreted = f(x);
  std::vector<float> c = compiled.to_vector<float>(), in = interpreted.to_vector<float>();
  for (size_t i = 0; i < c.size(); ++i) {
    INFO("x = " << v[i]);
    if (std::isnan(in[i]) || std::isinf(in[i]))
      CHECK((std::isnan(c[i]) ? std::isnan(in[i]) : c[i] == in[i]));
    else
      CHECK(c[i] == Approx(in[i]).epsilon(1e-6).margin(1e-7));
  }
}

TEST_CASE("erf_inv's gradient against finite differences") {
  UseInterpreter interp;
  auto loss = [](const Array& x) { return jnp::sum(lax::erf_inv(x) * x); };
  const std::vector<double> x{-0.9, -0.3, 0.1, 0.6, 0.95};
  std::vector<double> g = grad(loss)(testing::f64(x, {5})).to_vector<double>();
  std::vector<double> fd = finite_difference(loss, x);
  for (size_t i = 0; i < x.size(); ++i) CHECK(g[i] == Approx(fd[i]).epsilon(1e-6));
}

TEST_CASE("rev and split are primitives: concatenate and reverse cumsum transpose as JAX's") {
  auto cat = [](const Array& a, const Array& b) {
    return jnp::sum(lax::integer_pow(jnp::concatenate({a, b}), 2));
  };
  CHECK(trace(grad(cat), f32({3}), f32({2})) == golden_case("concatenate grad"));
  auto cum = [](const Array& a) {
    Params params{{"axis", int64_t{0}}, {"reverse", true}};
    return jnp::sum(
        lax::integer_pow(bind1("cumsum", {a}, params, std::source_location::current()), 2));
  };
  CHECK(trace(grad(cum), f32({3})) == golden_case("cumsum reverse grad"));
  UseInterpreter interp;
  CHECK(lax::rev(testing::f64({1, 2, 3, 4, 5, 6}, {2, 3}), {0, 1}).to_vector<double>() ==
        std::vector<double>{6, 5, 4, 3, 2, 1});
  CHECK_THROWS_WITH(lax::rev(testing::f64({1, 2}, {2}), {0, 0}),
                    Catch::Contains("rev: dimension 0 is listed twice"));
}

TEST_CASE("stop_gradient prints as JAX's and passes no derivative") {
  auto f = [](const Array& x) { return jnp::sin(lax::stop_gradient(x)) * x; };
  CHECK(trace(f, f32({3})) == golden_case("stop_gradient jaxpr"));
  auto loss = [](const Array& x) { return jnp::sum(jnp::sin(lax::stop_gradient(x)) * x); };
  CHECK(trace(grad(loss), f32({3})) == golden_case("stop_gradient grad jaxpr"));
  auto jvp_f = [](const Array& x, const Array& t) {
    auto [y, ty] = jvp([](const Array& a) { return lax::stop_gradient(a) * a; }, x, t);
    return std::make_tuple(y, ty);
  };
  CHECK(trace(jvp_f, f32({3}), f32({3})) == golden_case("stop_gradient jvp jaxpr"));
  // d/dx sum(sin(sg(x)) * x) = sin(x): the stopped path contributes nothing.
  UseInterpreter interp;
  Array x = testing::f64({0.5, -1.25, 2.0}, {3});
  std::vector<double> g = grad(loss)(x).to_vector<double>();
  CHECK(g[0] == Approx(std::sin(0.5)));
  CHECK(g[1] == Approx(std::sin(-1.25)));
  CHECK(g[2] == Approx(std::sin(2.0)));
  // Integers have no tangent: stop_gradient returns them as they are, binding nothing.
  auto ints = [](const Array& i) { return lax::stop_gradient(i); };
  CHECK(trace(ints, testing::i32({2})) == "{ lambda ; a:i32[2]. let  in (a,) }");
}

TEST_CASE("sort and argsort trace as jnp.sort and jnp.argsort") {
  CHECK(trace([](const Array& a) { return jnp::sort(a); }, f32({3})) ==
        golden_case("jnp.sort jaxpr"));
  CHECK(trace([](const Array& a) { return jnp::sort(a, 0); }, f32({2, 3})) ==
        golden_case("jnp.sort 2d axis 0"));
  CHECK(trace([](const Array& a) { return jnp::sort(a, -1, true, true); }, f32({3})) ==
        golden_case("jnp.sort descending"));
  CHECK(trace([](const Array& a) { return jnp::argsort(a); }, f32({3})) ==
        golden_case("jnp.argsort jaxpr"));
  CHECK(trace([](const Array& a) { return jnp::argsort(a, -1, true, true); }, f32({3})) ==
        golden_case("jnp.argsort stable descending"));
  auto two = [](const Array& a, const Array& b) {
    auto s = lax::sort({a, b}, -1, true, 1);
    return std::make_tuple(s[0], s[1]);
  };
  CHECK(trace(two, f32({3}), testing::i32({3})) == golden_case("lax.sort two operands num_keys=1"));
  auto two_keys = [](const Array& a, const Array& b) {
    auto s = lax::sort({a, b}, -1, true, 2);
    return std::make_tuple(s[0], s[1]);
  };
  CHECK(trace(two_keys, f32({3}), f32({3})) == golden_case("lax.sort two keys"));
  CHECK(trace([](const Array& a) { return lax::sort(a, -1, false); }, f32({3})) ==
        golden_case("lax.sort unstable"));
  CHECK(trace([](const Array& a) { return jnp::sort(a); }, testing::i32({3})) ==
        golden_case("sort int"));
}

TEST_CASE("sort orders as JAX does: -0.0 equals 0.0, NaN last, stable, by several keys") {
  UseInterpreter interp;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Array x = f32_array({nan, 1.0f, -0.0f, 0.0f, -inf, inf, -1.0f});
  std::vector<float> s = jnp::sort(x).to_vector<float>();
  // JAX: [-inf, -1., -0., 0., 1., inf, nan] ("sort nan and -0.0 order").
  CHECK(s[0] == -inf);
  CHECK(s[1] == -1.0f);
  CHECK((s[2] == 0.0f && std::signbit(s[2])));  // stable: -0.0 came first
  CHECK((s[3] == 0.0f && !std::signbit(s[3])));
  CHECK(s[4] == 1.0f);
  CHECK(s[5] == inf);
  CHECK(std::isnan(s[6]));
  CHECK(jnp::argsort(x).to_vector<int32_t>() == std::vector<int32_t>{4, 6, 2, 3, 1, 5, 0});
  // Descending and stable: ties keep their order.
  Array ties = f32_array({2, 1, 2, 3, 1});
  CHECK(jnp::argsort(ties, -1, true, true).to_vector<int32_t>() ==
        std::vector<int32_t>{3, 0, 2, 1, 4});
  // Two keys, along axis 0 of a matrix: rows ordered by (a, b) in each column.
  Array a = testing::f64({1, 0, 1, 0, 0, 1}, {3, 2});
  Array b = testing::f64({5, 9, 4, 8, 7, 6}, {3, 2});
  auto sorted = lax::sort({a, b}, 0, true, 2);
  CHECK(sorted[0].to_vector<double>() == std::vector<double>{0, 0, 1, 0, 1, 1});
  CHECK(sorted[1].to_vector<double>() == std::vector<double>{7, 8, 4, 9, 5, 6});
}

TEST_CASE("sort's gradient sends each cotangent back to where its element came from") {
  UseInterpreter interp;
  auto loss = [](const Array& a) { return jnp::sum(jnp::sort(a) * testing::f64({0, 1, 2}, {3})); };
  // JAX: [2., 0., 1.] at [0.5, -1.25, 2.0] ("sort grad values").
  std::vector<double> g = grad(loss)(testing::f64({0.5, -1.25, 2.0}, {3})).to_vector<double>();
  CHECK(g == std::vector<double>{1.0, 0.0, 2.0});
  // A 2-D sort along axis 0, against finite differences.
  std::mt19937 rng(3);
  Array x = testing::random_f64(rng, {4, 3});
  Array w = testing::random_f64(rng, {4, 3});
  auto loss2 = [&](const Array& v) {
    return jnp::sum(jnp::square(jnp::sort(jnp::reshape(v, {4, 3}), 0)) * w);
  };
  std::vector<double> g2 = grad(loss2)(jnp::ravel(x)).to_vector<double>();
  std::vector<double> fd = finite_difference(loss2, jnp::ravel(x).to_vector<double>());
  for (size_t i = 0; i < fd.size(); ++i) CHECK(g2[i] == Approx(fd[i]).epsilon(1e-6).margin(1e-9));
  // Forward mode: the tangent moves with its element.
  auto [y, t] = jvp([](const Array& a) { return jnp::sort(a); }, testing::f64({3, 1, 2}, {3}),
                    testing::f64({30, 10, 20}, {3}));
  CHECK(y.to_vector<double>() == std::vector<double>{1, 2, 3});
  CHECK(t.to_vector<double>() == std::vector<double>{10, 20, 30});
}

TEST_CASE("sort compiled (jit, grad) equals the interpreter") {
  std::mt19937 rng(11);
  Array x = testing::random_f64(rng, {5, 7});
  auto f = [](const Array& a) { return jnp::sum(jnp::sin(jnp::sort(a, 1)) * jnp::argsort(a, 0)); };
  Array y = jit(f)(x);
  Array g = jit(grad(f))(x);
  UseInterpreter interp;
  test::require_close(y.buffer(), f(x).buffer());
  test::require_close(g.buffer(), grad(f)(x).buffer());
}

TEST_CASE("shifts, population_count and bitcast_convert_type: JAX's text, XLA's values") {
  const std::string jax = golden::jax_case("random.md", "[partitionable] shifts and bitwise jaxpr");
  auto bits = [](const Array& a, const Array& b) {
    // One statement per op: C++ evaluates a call's arguments in no fixed order.
    Array sl = lax::shift_left(a, b);
    Array srl = lax::shift_right_logical(a, b);
    Array ai = lax::convert_element_type(a, DType::i32);
    Array bi = lax::convert_element_type(b, DType::i32);
    Array sra = lax::shift_right_arithmetic(ai, bi);
    Array o = lax::bitwise_or(a, b);
    Array n = lax::bitwise_and(a, b);
    Array x = lax::bitwise_xor(a, b);
    Array nt = lax::bitwise_not(a);
    Array pc = lax::population_count(a);
    return std::make_tuple(sl, srl, sra, o, n, x, nt, pc);
  };
  const ShapeDtype u32{DType::u32, {3}};
  CHECK(trace(bits, u32, u32) == jax);
  CHECK(to_string(*parse_jaxpr(jax)) == jax);  // JAX's text parses and prints back
  UseInterpreter interp;
  Array a = typed({1, 2, 4294967295.0}, DType::u32), b = typed({3, 31, 4}, DType::u32);
  auto [sl, srl, sra, o, n, x, nt, pc] = bits(a, b);
  CHECK(sl.to_vector<uint32_t>() == std::vector<uint32_t>{8, 0, 0xFFFFFFF0u});
  CHECK(srl.to_vector<uint32_t>() == std::vector<uint32_t>{0, 0, 0x0FFFFFFFu});
  CHECK(sra.to_vector<int32_t>() == std::vector<int32_t>{0, 0, -1});
  CHECK(x.to_vector<uint32_t>() == std::vector<uint32_t>{2, 29, 0xFFFFFFFBu});
  CHECK(nt.to_vector<uint32_t>() == std::vector<uint32_t>{0xFFFFFFFEu, 0xFFFFFFFDu, 0});
  CHECK(pc.to_vector<uint32_t>() == std::vector<uint32_t>{1, 1, 32});
  // A shift by the width or more gives 0 (the sign for an arithmetic one), as XLA's.
  Array wide = typed({40, 32}, DType::i32), neg = typed({-8, 8}, DType::i32);
  CHECK(lax::shift_right_arithmetic(neg, wide).to_vector<int32_t>() == std::vector<int32_t>{-1, 0});
  CHECK(lax::shift_left(neg, wide).to_vector<int32_t>() == std::vector<int32_t>{0, 0});
  // Bitcasts: 1.0f is 0x3f800000; to a narrower dtype a minor dimension appears.
  Array one = f32_array({1.0f, -2.0f});
  CHECK(lax::bitcast_convert_type(one, DType::u32).to_vector<uint32_t>() ==
        std::vector<uint32_t>{0x3f800000u, 0xc0000000u});
  CHECK(lax::bitcast_convert_type(lax::bitcast_convert_type(one, DType::i32), DType::f32)
            .to_vector<float>() == std::vector<float>{1.0f, -2.0f});
  CHECK(trace([](const Array& v) { return lax::bitcast_convert_type(v, DType::u8); }, f32({2})) ==
        "{ lambda ; a:f32[2]. let\n"
        "    b:u8[2,4] = bitcast_convert_type[new_dtype=uint8] a\n"
        "  in (b,) }");
  CHECK_THROWS_WITH(lax::shift_left(one, one), Catch::Contains("shift_left"));
}

TEST_CASE("shifts and population_count compiled equal the interpreter") {
  Array a = typed({1, 2, 4294967295.0, 12345}, DType::u32);
  Array b = typed({3, 31, 4, 0}, DType::u32);
  auto f = [](const Array& x, const Array& y) {
    return lax::population_count(
        lax::bitwise_xor(lax::shift_left(x, y), lax::shift_right_logical(x, y)));
  };
  Array compiled = jit(f)(a, b);
  UseInterpreter interp;
  CHECK(compiled.to_vector<uint32_t>() == f(a, b).to_vector<uint32_t>());
}

TEST_CASE("sort's errors name the op") {
  CHECK_THROWS_WITH(lax::sort({Array(testing::f64({1, 2}, {2})), Array(testing::f64({1}, {1}))}),
                    Catch::Contains("sort: operands must have one shape"));
  CHECK_THROWS_WITH(lax::sort(std::vector<Array>{testing::f64({1, 2}, {2})}, -1, true, 2),
                    Catch::Contains("num_keys=2"));
  CHECK_THROWS_WITH(jnp::sort(testing::f64({1, 2}, {2}), 1),
                    Catch::Contains("sort: axis 1 is out of bounds"));
}

}  // namespace cjax
