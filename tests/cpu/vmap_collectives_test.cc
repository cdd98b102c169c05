// Collectives under vmap(axis_name=...): each against the array computation it means (a sum, a
// max, an index, a gather over the batch), interpreted and compiled; unbatched operands, nested
// vmaps naming either axis or both, a collective inside scan, and gradients through psum against
// finite differences.
#include <catch2/catch.hpp>

#include <random>

#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"
#include "ir/parse/parser.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"

namespace cjax {
namespace vmap_collectives_test {

namespace jnp = cjax::numpy;
const auto none = std::nullopt;

Array random_f32(std::mt19937& rng, const Shape& shape) {
  return testing::random_f64(rng, shape).astype(DType::f32);
}

// `got()` on the interpreter and on the compiled back end, against `want`.
template <class F>
void check_both(F got, const Array& want) {
  {
    UseInterpreter interp;
    test::require_close(got().buffer(), want.buffer());
  }
  test::require_close(got().buffer(), want.buffer());
}

TEST_CASE("psum, pmax, pmin, pmean and axis_index over a vmap axis are reductions over the batch") {
  std::mt19937 rng(41);
  const Array x = random_f32(rng, {5, 3});
  check_both(
      [&] { return vmap([](const Array& a) { return a / lax::psum(a, "i"); }, 0, 0, "i")(x); },
      x / jnp::sum(x, 0));
  check_both(
      [&] { return vmap([](const Array& a) { return a - lax::pmax(a, "i"); }, 0, 0, "i")(x); },
      x - jnp::max(x, 0));
  check_both([&] { return vmap([](const Array& a) { return lax::pmin(a, "i"); }, 0, 0, "i")(x); },
             jnp::broadcast_to(jnp::min(x, 0), {5, 3}));
  check_both([&] { return vmap([](const Array& a) { return lax::pmean(a, "i"); }, 0, 0, "i")(x); },
             jnp::broadcast_to(jnp::mean(x, 0), {5, 3}));
  // Batched along axis 1, results placed along axis 1.
  check_both(
      [&] { return vmap([](const Array& a) { return a / lax::psum(a, "i"); }, 1, 1, "i")(x); },
      x / jnp::sum(x, 1, /*keepdims=*/true));
  check_both(
      [&] { return vmap([](const Array& a) { return a * lax::axis_index("i"); }, 0, 0, "i")(x); },
      x * jnp::expand_dims(jnp::arange(5.0).astype(DType::f32), {1}));
}

TEST_CASE("psum of a value every example shares is the batch size times it") {
  std::mt19937 rng(42);
  const Array x = random_f32(rng, {4, 3}), w = random_f32(rng, {3});
  auto f = [](const Array& a, const Array& b) { return a * lax::psum(b, "i"); };
  check_both([&] { return vmap(f, {0, none}, 0, "i")(x, w); }, x * (w * 4.0));
  CHECK(vmap([](const Array& a) { return a * lax::psum(1, "i"); }, 0, 0, "i")(x)[0][0].item() ==
        Approx(4.0 * x[0][0].item()));
}

TEST_CASE("all_gather and psum_scatter over a vmap axis gather and scatter the batch") {
  std::mt19937 rng(43);
  const Array x = random_f32(rng, {4, 3});
  check_both(
      [&] { return vmap([](const Array& a) { return lax::all_gather(a, "i"); }, 0, 0, "i")(x); },
      jnp::broadcast_to(x, {4, 4, 3}));
  check_both(
      [&] {
        return vmap([](const Array& a) { return lax::all_gather(a, "i", 0, true); }, 0, 0, "i")(x);
      },
      jnp::broadcast_to(jnp::reshape(x, {12}), {4, 12}));
  // Example i holds y[i] of shape [4, 3]: it keeps row i of the sum over examples.
  const Array y = random_f32(rng, {4, 4, 3});
  check_both(
      [&] { return vmap([](const Array& a) { return lax::psum_scatter(a, "i"); }, 0, 0, "i")(y); },
      jnp::sum(y, 0));
  const Array z = random_f32(rng, {4, 8});
  check_both(
      [&] {
        return vmap([](const Array& a) { return lax::psum_scatter(a, "i", 0, true); }, 0, 0,
                    "i")(z);
      },
      jnp::reshape(jnp::sum(z, 0), {4, 2}));
}

TEST_CASE("ppermute over a vmap axis moves examples, zeros where no pair sends") {
  std::mt19937 rng(47);
  const Array x = random_f32(rng, {4, 3});
  const std::vector<std::pair<int64_t, int64_t>> ring = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  auto rolled = [&](int axis) {
    return vmap([&](const Array& a) { return lax::ppermute(a, "i", ring); }, axis, axis, "i");
  };
  // Example j receives example j - 1's value.
  check_both([&] { return rolled(0)(x); },
             jnp::concatenate({x[cjax::slice(3, 4)], x[cjax::slice(0, 3)]}, 0));
  check_both([&] { return rolled(1)(jnp::transpose(x)); },
             jnp::transpose(jnp::concatenate({x[cjax::slice(3, 4)], x[cjax::slice(0, 3)]}, 0)));
  // Only 0 -> 2: example 2 gets example 0's, the others zeros.
  auto partial = vmap([](const Array& a) { return lax::ppermute(a, "i", {{0, 2}}); }, 0, 0, "i");
  const Array zero = jnp::zeros({1, 3}).astype(DType::f32);
  check_both([&] { return partial(x); },
             jnp::concatenate({zero, zero, x[cjax::slice(0, 1)], zero}, 0));
}

TEST_CASE("all_to_all over a vmap axis exchanges blocks between examples") {
  std::mt19937 rng(48);
  // Example i holds x[i] of shape [4, 3]; not tiled, it sends row j to example j, which stacks
  // what it receives along axis 1: out[j][r][i] = x[i][j][r]... for concat_axis 1 of [3] rows.
  const Array x = random_f32(rng, {4, 4, 3});
  auto swap01 = vmap([](const Array& a) { return lax::all_to_all(a, "i", 0, 0); }, 0, 0, "i");
  check_both([&] { return swap01(x); }, jnp::transpose(x, {1, 0, 2}));
  auto to_cols = vmap([](const Array& a) { return lax::all_to_all(a, "i", 0, 1); }, 0, 0, "i");
  // Example j: for each received block i (x[i][j], shape [3]), placed at column i of [3, 4].
  check_both([&] { return to_cols(x); }, jnp::transpose(x, {1, 2, 0}));
  // Tiled, split along axis 1 (size 8) into blocks of 2, joined along axis 0.
  const Array y = random_f32(rng, {4, 3, 8});
  auto tiled = vmap([](const Array& a) { return lax::all_to_all(a, "i", 1, 0, true); }, 0, 0, "i");
  // out[j] = concat_i y[i][:, 2j:2j+2] along axis 0: shape [12, 2].
  const Array want =
      jnp::reshape(jnp::transpose(jnp::reshape(y, {4, 3, 4, 2}), {2, 0, 1, 3}), {4, 12, 2});
  check_both([&] { return tiled(y); }, want);
}

TEST_CASE("gradients through ppermute and all_to_all under vmap match finite differences") {
  std::mt19937 rng(49);
  const Array x = random_f32(rng, {4, 4}).astype(DType::f64);
  const Array weights = jnp::arange(1.0, 17.0).reshape({4, 4});
  auto body = [](const Array& a) {
    return lax::all_to_all(jnp::sin(lax::ppermute(a, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}})), "i",
                           0, 0);
  };
  auto loss = [&](const Array& xs) { return jnp::sum(vmap(body, 0, 0, "i")(xs) * weights); };
  const Array g = grad(loss)(x);
  const double h = 1e-6;
  for (int64_t k = 0; k < 16; ++k) {
    const Array e = jnp::where(jnp::equal(jnp::arange(16), int(k)), 1.0, 0.0)
                        .astype(DType::f64)
                        .reshape({4, 4});
    const double fd = (loss(x + h * e).item() - loss(x - h * e).item()) / (2 * h);
    CHECK(g.reshape({16})[k].item() == Approx(fd).epsilon(1e-6).margin(1e-8));
  }
}

TEST_CASE("shard_map over a one-device mesh runs in this process, interpreted and compiled") {
  std::mt19937 rng(50);
  const Array x = random_f32(rng, {6, 2});
  const Mesh one({1}, {"x"});
  auto f = shard_map(
      [](const Array& a) {
        return std::tuple{lax::psum(a, "x") * 2.0, lax::axis_index("x")};
      },
      one, {P("x")}, {P("x"), P()});
  {
    UseInterpreter interp;
    auto [y, index] = f(x);
    test::require_close(y.buffer(), (x * 2.0).buffer());
    CHECK(index.item() == 0);
  }
  auto [y, index] = jit(f)(x);
  test::require_close(y.buffer(), (x * 2.0).buffer());
  CHECK(index.item() == 0);
  // The body itself runs compiled: an eager call compiles it once (cached by its text).
  auto* cpu = dynamic_cast<CpuBackend*>(current_backend().get());
  REQUIRE(cpu);
  auto g = shard_map([](const Array& a) { return jnp::sin(a) * 3.0; }, one, {P("x")}, {P("x")});
  const size_t before = cpu->compiled_programs();
  test::require_close(g(x).buffer(), (jnp::sin(x) * 3.0).buffer());
  CHECK(cpu->compiled_programs() == before + 1);
  g(x);
  CHECK(cpu->compiled_programs() == before + 1);
}

TEST_CASE("shard_map over more devices than processes says how to start them") {
  const Mesh four({4}, {"x"});
  auto f = shard_map([](const Array& a) { return lax::psum(a, "x"); }, four, {P("x")}, {P()});
  UseInterpreter interp;
  CHECK_THROWS_WITH(f(jnp::ones({8})),
                    Catch::Contains("the mesh Mesh('x': 4, axis_types=(Auto,)) has 4 devices, "
                                    "but 1 process runs") &&
                        Catch::Contains("mpirun -np 4"));
}

TEST_CASE("nested vmaps: a collective names the outer axis, the inner one, or both") {
  std::mt19937 rng(44);
  const Array x = random_f32(rng, {3, 4});
  auto over = [](lax::AxisNames names) {
    return [names](const Array& a) { return lax::psum(a, names); };
  };
  auto nested = [&](lax::AxisNames names) { return vmap(vmap(over(names), 0, 0, "j"), 0, 0, "i"); };
  check_both([&] { return nested("i")(x); }, jnp::broadcast_to(jnp::sum(x, 0), {3, 4}));
  check_both([&] { return nested("j")(x); },
             jnp::broadcast_to(jnp::sum(x, 1, /*keepdims=*/true), {3, 4}));
  check_both([&] { return nested({"i", "j"})(x); }, jnp::broadcast_to(jnp::sum(x), {3, 4}));
}

TEST_CASE("a collective inside scan under vmap sees every example at each step") {
  std::mt19937 rng(45);
  const Array x = random_f32(rng, {3});
  auto f = [](const Array& c0) {
    return scan(
               [](const Array& c, const Array&) {
                 return std::pair{c + lax::psum(c, "i"), c};
               },
               c0, jnp::zeros({2}))
        .first;
  };
  // Each step adds the sum over examples: c1 = c0 + S, c2 = c1 + 4 S (sum(c1) = S + 3 S).
  const Array s = jnp::sum(x);
  check_both([&] { return vmap(f, 0, 0, "i")(x); }, x + 5.0 * s);
  // No operand of the scan is batched, but its body names the axis: c -> c + 2 c, twice.
  const Array w = random_f32(rng, {3});
  auto g = [&](const Array& a, const Array& c0) { return a * f(c0); };
  check_both(
      [&] {
        return vmap(g, {0, none}, 0, "i")(jnp::stack({x, x}), w);
      },
      jnp::stack({x, x}) * (9.0 * w));
}

TEST_CASE("gradients through psum under vmap match finite differences") {
  std::mt19937 rng(46);
  const Array x = jnp::abs(random_f32(rng, {4})) + 0.5;
  auto normalized = [](const Array& a) { return a / lax::psum(a, "i"); };
  auto loss = [&](const Array& xs) {
    return jnp::sum(jnp::power(vmap(normalized, 0, 0, "i")(xs), 2) * jnp::arange(1.0, 5.0));
  };
  const Array g = grad(loss)(x);
  const double h = 1e-3;
  for (int64_t k = 0; k < 4; ++k) {
    const Array e = jnp::where(jnp::equal(jnp::arange(4), int(k)), 1.0, 0.0).astype(DType::f64);
    auto at = [&](double d) { return loss(x.astype(DType::f64) + d * e).item(); };
    CHECK(g[k].item() == Approx((at(h) - at(-h)) / (2 * h)).epsilon(1e-3));
  }
}

TEST_CASE("a collective over a name nothing binds is refused by the interpreter, naming it") {
  const Jaxpr j = *parse_jaxpr(
      "{ lambda ; a:f32[3]. let b:f32[3] = psum[axes=('i',) axis_index_groups=None] a in (b,) }");
  UseInterpreter interp;
  CHECK_THROWS_WITH(eval_jaxpr(j, {}, std::vector<Array>{jnp::ones({3})}),
                    Catch::Contains("unbound axis name: i"));
}

}  // namespace vmap_collectives_test
}  // namespace cjax
