#include <cmath>

#include "ir/errors.h"
#include "jaxpr_builder.h"
#include "runtime_test_util.h"

using namespace cjax;
using namespace cjax::runtime;
using namespace cjax::runtime::testing;

namespace {

// { lambda a:f32[3]; b:f32[3]. let c = mul b 2.0:f32[]; d = add c a; e = sin d in (e, c, 7:i32[]) }
Jaxpr small_jaxpr(bool attach_const) {
  Jaxpr j;
  Var a = var(DType::f32, {3}), b = var(DType::f32, {3}), c = var(DType::f32, {3}),
      d = var(DType::f32, {3}), e = var(DType::f32, {3});
  j.constvars = {a};
  j.invars = {b};
  j.eqns = {make_eqn(mul_p, {b, Literal::of(2.0, DType::f32, true)}, {c}),
            make_eqn(add_p, {c, a}, {d}), make_eqn(sin_p, {d}, {e})};
  j.outvars = {e, c, Literal::of_int(7, DType::i32)};
  if (attach_const) j.consts = {f32({3}, {1, 2, 3}).to_const()};
  return j;
}
}  // namespace

TEST_CASE("eval_jaxpr: consts attached to the jaxpr, literals, literal outputs") {
  Jaxpr j = small_jaxpr(true);
  std::vector<Buffer> args{f32({3}, {0, 0.5f, -1})};
  std::vector<Buffer> out = eval_jaxpr(j, args);
  REQUIRE(out.size() == 3);
  CHECK(close(vals(out[0]), {std::sin(1.0f), std::sin(3.0f), std::sin(1.0f)}));
  CHECK(vals(out[1]) == std::vector<double>{0, 1, -2});
  CHECK(out[2].aval().str_short() == "i32[]");
  CHECK(vals(out[2]) == std::vector<double>{7});
}

TEST_CASE("eval_jaxpr: consts passed explicitly") {
  Jaxpr j = small_jaxpr(false);
  std::vector<Buffer> consts{f32({3}, {10, 20, 30})};
  std::vector<Buffer> args{f32({3}, {1, 1, 1})};
  std::vector<Buffer> out = eval_jaxpr(j, consts, args);
  CHECK(close(vals(out[0]), {std::sin(12.0f), std::sin(22.0f), std::sin(32.0f)}));
  // Without consts, the attached ones are required.
  CHECK_THROWS_AS(eval_jaxpr(j, args), Error);
  std::vector<Buffer> wrong{f32({2}, {1, 2})};
  CHECK_THROWS_WITH(eval_jaxpr(j, wrong, args), Catch::Contains("const 0") &&
                                                    Catch::Contains("f32[2]") &&
                                                    Catch::Contains("f32[3]"));
}

TEST_CASE("eval_jaxpr: argument types are checked against the invars") {
  Jaxpr j;
  Var a = var(DType::f32, {3}), b = var(DType::i32, {}), c = var(DType::f32, {3});
  j.invars = {a, b};
  j.eqns = {make_eqn(sin_p, {a}, {c})};
  j.outvars = {c};
  std::vector<Buffer> bad_type{f32({3}, {1, 2, 3}), f32_scalar(1)};
  CHECK_THROWS_AS(eval_jaxpr(j, bad_type), TypeError);
  CHECK_THROWS_WITH(eval_jaxpr(j, bad_type),
                    "eval_jaxpr: argument 1 has type f32[] but the jaxpr expects i32[]");
  std::vector<Buffer> bad_shape{f32({4}, {1, 2, 3, 4}), i32_scalar(0)};
  CHECK_THROWS_WITH(eval_jaxpr(j, bad_shape),
                    "eval_jaxpr: argument 0 has type f32[4] but the jaxpr expects f32[3]");
  std::vector<Buffer> too_few{f32({3}, {1, 2, 3})};
  CHECK_THROWS_AS(eval_jaxpr(j, too_few), TypeError);
  std::vector<Buffer> empty{Buffer(), i32_scalar(0)};
  CHECK_THROWS_AS(eval_jaxpr(j, empty), TypeError);
}

TEST_CASE("eval_jaxpr: a primitive without a kernel is an UnsupportedError") {
  Jaxpr j;
  Var a = var(DType::f32), b = var(DType::f32);
  j.invars = {a};
  j.eqns = {make_eqn(unknown_p, {a}, {b})};
  j.outvars = {b};
  std::vector<Buffer> args{f32_scalar(1)};
  CHECK_THROWS_AS(eval_jaxpr(j, args), UnsupportedError);
  CHECK_THROWS_WITH(eval_jaxpr(j, args), "interpreter: no kernel for primitive 'tpu_custom_call'");
  Primitive opaque = make_prim("rms_norm_fwd");
  opaque.opaque = true;
  CHECK_THROWS_WITH(apply1("rms_norm_fwd", {}, {f32_scalar(1)}, ShapedArray(DType::f32, {})),
                    "interpreter: no kernel for primitive 'rms_norm_fwd'");
  CHECK_FALSE(has_kernel("tpu_custom_call"));
  CHECK(has_kernel("dot_general"));
}

TEST_CASE("eval_jaxpr: elided constants and undefined variables are errors") {
  Jaxpr j;
  Var a = var(DType::f32, {3}), b = var(DType::f32, {3});
  Literal elided;
  elided.aval = ShapedArray(DType::f32, {3});
  elided.elided = true;
  j.invars = {a};
  j.eqns = {make_eqn(add_p, {a, elided}, {b})};
  j.outvars = {b};
  std::vector<Buffer> args{f32({3}, {1, 2, 3})};
  CHECK_THROWS_AS(eval_jaxpr(j, args), UnsupportedError);

  Jaxpr k;
  Var x = var(DType::f32), ghost = var(DType::f32), y = var(DType::f32);
  k.invars = {x};
  k.eqns = {make_eqn(add_p, {x, ghost}, {y})};
  k.outvars = {y};
  std::vector<Buffer> one{f32_scalar(1)};
  CHECK_THROWS_AS(eval_jaxpr(k, one), VerifyError);
}

TEST_CASE("eval_jaxpr: dropped outputs and repeated operands") {
  // { lambda ; a:f32[]. let _:f32[] = sin a; b = mul a a in (b, b) }
  Jaxpr j;
  Var a = var(DType::f32), b = var(DType::f32);
  j.invars = {a};
  j.eqns = {make_eqn(sin_p, {a}, {Var::drop(ShapedArray(DType::f32, {}))}),
            make_eqn(mul_p, {a, a}, {b})};
  j.outvars = {b, b};
  std::vector<Buffer> args{f32_scalar(3)};
  std::vector<Buffer> out = eval_jaxpr(j, args);
  CHECK(vals(out[0]) == std::vector<double>{9});
  CHECK(out[1].data() == out[0].data());
}

TEST_CASE("eval_jaxpr frees each value after its last use") {
  // A chain of 8 sins over f32[4096] (16 KiB each): at most the input, one live intermediate and
  // the one being produced are alive at a time.
  constexpr int64_t n = 4096;
  Jaxpr j;
  Var x = var(DType::f32, {n});
  j.invars = {x};
  Var cur = x;
  for (int i = 0; i < 8; ++i) {
    Var next = var(DType::f32, {n});
    j.eqns.push_back(make_eqn(sin_p, {cur}, {next}));
    cur = next;
  }
  j.outvars = {cur};
  std::vector<Buffer> args{Buffer::zeros(ShapedArray(DType::f32, {n}))};
  const size_t live0 = memory_stats().live_bytes;
  reset_peak_bytes();
  std::vector<Buffer> out = eval_jaxpr(j, args);
  const MemoryStats s = memory_stats();
  CHECK(s.live_bytes == live0 + n * 4);           // only the result survives
  CHECK(s.peak_bytes <= live0 + 2 * n * 4 + 64);  // never 8 intermediates at once
  out.clear();
  CHECK(memory_stats().live_bytes == live0);
}

namespace {
void twice_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  const float* x = in[0].as<float>();
  float* y = out[0].as<float>();
  for (int64_t i = 0; i < in[0].aval().size(); ++i) y[i] = 2 * x[i];
}
}  // namespace

TEST_CASE("register_kernel adds a kernel that writes pre-allocated outputs") {
  CHECK_FALSE(has_kernel("test_twice"));
  register_kernel("test_twice", twice_kernel);
  CHECK(has_kernel("test_twice"));
  CHECK(vals(apply1("test_twice", {}, {f32({2}, {1, 2})}, ShapedArray(DType::f32, {2}))) ==
        std::vector<double>{2, 4});
}

TEST_CASE("kernel errors name the primitive") {
  CHECK_THROWS_WITH(apply1("transpose", {{"permutation", ParamValue::ints({0})}},
                           {f32({2, 2}, {1, 2, 3, 4})}, ShapedArray(DType::f32, {2, 2})),
                    Catch::StartsWith("interpreter: transpose: "));
  CHECK_THROWS_WITH(apply1("reduce_sum", {}, {f32({2}, {1, 2})}, ShapedArray(DType::f32, {})),
                    Catch::Equals("interpreter: reduce_sum: missing param 'axes'"));
  CHECK_THROWS_AS(apply("add", {}, {f32_scalar(1)}, {ShapedArray(DType::f32, {})}), TypeError);
  CHECK_THROWS_AS(apply("sin", {}, {f32_scalar(1)}, {}), TypeError);
}
