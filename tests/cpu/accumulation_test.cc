// Sums that an f32 accumulator gets wrong: reduce_sum, mean (a sum divided), cumsum and the
// native loop nest of dot_general accumulate f32 in f64 on both back ends and round once
// (runtime/kernels/kernel_util.h WideSum, compiler/cpu/lower_reductions.cc, lower_dot.cc).
// Sums whose exact value needs more than 24 bits must come out exact, and sums of random data
// within one f32 ulp of the float64 sum.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"

namespace cjax {
namespace {

std::vector<runtime::Buffer> run_both(const std::string& text,
                                      const std::vector<runtime::Buffer>& in, bool compiled) {
  JaxprRef j = parse_jaxpr(text);
  return compiled ? lower::compile(*j, "test")->run(in) : runtime::eval_jaxpr(*j, in);
}

runtime::Buffer filled(const Shape& shape, float value) {
  return runtime::Buffer::full(ShapedArray(DType::f32, shape), value);
}

// The spacing of f32 numbers at `x`.
double f32_ulp(double x) {
  const float f = static_cast<float>(std::abs(x));
  return static_cast<double>(std::nextafter(f, INFINITY) - f);
}

TEST_CASE("f32 sums past 2^24 are exact on both back ends") {
  for (bool compiled : {false, true}) {
    CAPTURE(compiled);
    // 2^25 ones: an f32 accumulator stops at 16777216.
    const auto sum = run_both(
        "{ lambda ; a:f32[33554432]. let b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a; "
        "c:f32[] = div b 33554432.0:f32[] in (b, c) }",
        {filled({33554432}, 1.0f)}, compiled);
    CHECK(sum[0].element(0) == 33554432.0);
    CHECK(sum[1].element(0) == 1.0);  // the mean
    // Columns of 8192 values 4097 (odd: every add past 2^24 rounds in f32): 2^25 + 8192 each.
    const auto cols = run_both(
        "{ lambda ; a:f32[8192,4]. let b:f32[4] = reduce_sum[axes=(0,) out_sharding=None] a "
        "in (b,) }",
        {filled({8192, 4}, 4097.0f)}, compiled);
    for (int64_t i = 0; i < 4; ++i) CHECK(cols[0].element(i) == 33562624.0);
    // A running sum of 2^25 ones ends at 2^25.
    const auto cum = run_both(
        "{ lambda ; a:f32[33554432]. let b:f32[33554432] = cumsum[axis=0 reverse=False] a "
        "in (b,) }",
        {filled({33554432}, 1.0f)}, compiled);
    CHECK(cum[0].element(33554431) == 33554432.0);
    CHECK(cum[0].element(16777217) == 16777218.0);  // (16777217 has no f32)
  }
}

TEST_CASE("a compiled small dot accumulates in f64: 4096 products of 4097 are exact") {
  // 4096 x 4097 = 16781312 needs 25 bits; the loop nest (at most 4096 multiply-adds) must not
  // round its partial sums to f32.
  lower::CompileOptions native;
  native.dot_path = lower::DotPath::native;
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[1,4096] b:f32[4096,1]. let c:f32[1,1] = dot_general[dimension_numbers="
      "(([1], [0]), ([], [])) preferred_element_type=float32] a b in (c,) }");
  const std::vector<runtime::Buffer> in = {filled({1, 4096}, 1.0f), filled({4096, 1}, 4097.0f)};
  const auto got = lower::compile(*j, "test", native)->run(in);
  CHECK(got[0].element(0) == 16781312.0);
}

TEST_CASE("f32 sums of random data are within one ulp of the float64 sum") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  constexpr int64_t kN = int64_t{1} << 22;
  std::vector<float> data(kN);
  for (float& x : data) x = u(rng);
  double exact = 0;
  for (float x : data) exact += static_cast<double>(x);
  const runtime::Buffer in = runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {kN}), data);
  for (bool compiled : {false, true}) {
    CAPTURE(compiled);
    const auto got = run_both(
        "{ lambda ; a:f32[4194304]. let b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a "
        "in (b,) }",
        {in}, compiled);
    CHECK(std::abs(got[0].element(0) - exact) <= f32_ulp(exact));
  }
  // The same for a small compiled dot, each output against its float64 dot.
  std::vector<float> a(256), b(256 * 16);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (float& x : a) x = n(rng);
  for (float& x : b) x = n(rng);
  lower::CompileOptions native;
  native.dot_path = lower::DotPath::native;
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[1,256] b:f32[256,16]. let c:f32[1,16] = dot_general[dimension_numbers="
      "(([1], [0]), ([], [])) preferred_element_type=float32] a b in (c,) }");
  const std::vector<float> row(a.begin(), a.begin() + 256);
  const std::vector<runtime::Buffer> args = {
      runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {1, 256}), row),
      runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {256, 16}), b)};
  const auto got = lower::compile(*j, "test", native)->run(args);
  for (int64_t col = 0; col < 16; ++col) {
    double want = 0;
    for (int64_t k = 0; k < 256; ++k)
      want += static_cast<double>(a[static_cast<size_t>(k)]) *
              static_cast<double>(b[static_cast<size_t>(k * 16 + col)]);
    CAPTURE(col);
    CHECK(std::abs(got[0].element(col) - want) <= f32_ulp(want));
  }
}

}  // namespace
}  // namespace cjax
