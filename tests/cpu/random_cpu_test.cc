// cjax::random on the compiled back end: threefry compiled natively (keys as i64 elements;
// random_bits, split, fold_in and seed as vectorizable integer loops), drawing the interpreter's
// (JAX's) values for every sampler, in both threefry modes (the classic one runs the
// interpreter's kernels from compiled code).
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>

#include "cjax/api.h"
#include "cjax/cjax.h"
#include "compiler/cpu/executable.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/random_values.h"

namespace cjax {
namespace random_cpu_test {

namespace jnp = cjax::numpy;

using random_values::ModeScope;

using KeyProgram = std::function<Array(const Array&)>;

// Programs of one key; integer and bool results are compared exactly, floats within a few ulps
// (the compiled log, erf_inv and fused multiply-adds differ from the interpreter's in the last
// bits).
const std::vector<std::pair<std::string, KeyProgram>>& programs() {
  static const std::vector<std::pair<std::string, KeyProgram>> all = {
      {"bits u32",
       [](const Array& k) {
         return random::bits(k, {5, 7});
       }},
      {"bits u8", [](const Array& k) { return random::bits(k, {9}, DType::u8); }},
      {"bits u16",
       [](const Array& k) {
         return random::bits(k, {3, 3}, DType::u16);
       }},
      {"bits u64", [](const Array& k) { return random::bits(k, {6}, DType::u64); }},
      {"split",
       [](const Array& k) {
         return random::key_data(random::split(k, Shape{2, 3}));
       }},
      {"fold_in", [](const Array& k) { return random::key_data(random::fold_in(k, 12345)); }},
      {"split then fold_in",
       [](const Array& k) { return random::key_data(random::fold_in(random::split(k, 4), 7)); }},
      {"uniform", [](const Array& k) { return random::uniform(k, {64}, DType::f32, -2.0, 5.0); }},
      {"normal",
       [](const Array& k) {
         return random::normal(k, {4, 16});
       }},
      {"truncated_normal",
       [](const Array& k) { return random::truncated_normal(k, -1.0, 2.0, Shape{32}); }},
      {"bernoulli", [](const Array& k) { return random::bernoulli(k, 0.3, Shape{40}); }},
      {"randint", [](const Array& k) { return random::randint(k, {50}, -5, 1000); }},
      {"gumbel", [](const Array& k) { return random::gumbel(k, {20}); }},
      {"categorical",
       [](const Array& k) {
         return random::categorical(k, jnp::log(jnp::arange(1.0, 16.0)), -1, Shape{8});
       }},
      {"permutation", [](const Array& k) { return random::permutation(k, 30); }},
      {"choice with p",
       [](const Array& k) {
         return random::choice(k, 5, {12}, true, cjax::array({0.1f, 0.2f, 0.3f, 0.25f, 0.15f}));
       }},
      {"vmap of uniform over split keys",
       [](const Array& k) {
         return vmap([](const Array& key) { return random::uniform(key, {3}); })(
             random::split(k, 4));
       }},
      {"dropout",
       [](const Array& k) {
         return nn::dropout(k, 0.25, jnp::ones({8, 8}, DType::f32));
       }},
  };
  return all;
}

void check_same(const Array& got, const Array& want) {
  REQUIRE(got.aval().str_short() == want.aval().str_short());
  if (is_floating(want.dtype())) {
    test::require_close(got.buffer(), want.buffer());
  } else {
    const runtime::Buffer &g = got.buffer(), &w = want.buffer();
    CHECK(std::memcmp(g.data(), w.data(), w.nbytes()) == 0);
  }
}

TEST_CASE("compiled random programs draw the interpreter's values in both threefry modes") {
  for (const bool partitionable : {true, false}) {
    ModeScope mode(partitionable);
    for (const auto& [name, f] : programs()) {
      INFO(name << (partitionable ? " (partitionable)" : " (classic)"));
      for (const int seed : {0, 42, -7}) {
        const Array k = random::key(seed);
        Array want;
        {
          UseInterpreter interp;
          want = f(k);
        }
        check_same(jit(f)(k), want);
      }
    }
  }
}

TEST_CASE("switching the threefry mode recompiles: the jit cache keys on it") {
  auto f = [](const Array& k) { return random::bits(k, {6}); };
  auto jf = jit(f);
  const Array k = random::key(3);
  for (const bool partitionable : {true, false, true}) {
    ModeScope mode(partitionable);
    Array want;
    {
      UseInterpreter interp;
      want = f(k);
    }
    check_same(jf(k), want);
  }
}

TEST_CASE("random_bits, split, fold_in and seed compile natively, not to kernel calls") {
  ModeScope mode(true);
  auto f = [](const Array& seed) {
    const Array k = random::fold_in(random::split(random::key(seed), 3)[1], 5);
    return random::uniform(k, {1000});
  };
  const Jaxpr j = make_jaxpr(f)(ShapeDtype{DType::i32, {}});
  const auto exe = lower::compile(j, "random");
  for (const std::string& call : exe->compile_stats().runtime_calls) {
    INFO(call);
    CHECK(call.find("random_") == std::string::npos);
  }
  const std::vector<runtime::Buffer> args{
      runtime::Buffer::from_data<int32_t>(ShapedArray(DType::i32, {}), std::vector<int32_t>{11})};
  test::require_close(exe->run(args)[0], runtime::eval_jaxpr(j, args)[0]);
}

TEST_CASE("jit of a raw key, and grad through a jitted sample's scale") {
  test::require_close(
      jit([](const Array& raw) { return random::bits(raw, {3}); })(random::PRNGKey(0)).buffer(),
      random::bits(random::key(0), {3}).buffer());
  const Array k = random::key(0);
  const Array g =
      jit(grad([&](const Array& s) { return jnp::sum(random::normal(k, {5}) * s); }))(Array(1.0f));
  CHECK(g.item() == Approx(jnp::sum(random::normal(k, {5})).item()).epsilon(1e-6));
}

}  // namespace random_cpu_test
}  // namespace cjax
