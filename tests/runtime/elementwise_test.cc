#include <cmath>
#include <limits>

#include "ir/errors.h"
#include "runtime_test_util.h"

using namespace cjax;
using namespace cjax::runtime;
using namespace cjax::runtime::testing;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("unary float kernels") {
  Buffer x = f32({4}, {0.0f, 0.5f, 1.0f, 2.0f});
  auto run = [&](const char* name) { return vals(apply_like(name, {x})); };
  CHECK(close(run("sin"), {0, std::sin(0.5), std::sin(1.0), std::sin(2.0)}));
  CHECK(close(run("cos"), {1, std::cos(0.5), std::cos(1.0), std::cos(2.0)}));
  CHECK(close(run("tan"), {0, std::tan(0.5), std::tan(1.0), std::tan(2.0)}));
  CHECK(close(run("tanh"), {0, std::tanh(0.5), std::tanh(1.0), std::tanh(2.0)}));
  CHECK(close(run("exp"), {1, std::exp(0.5), std::exp(1.0), std::exp(2.0)}));
  CHECK(close(run("log"), {-kInf, std::log(0.5), 0, std::log(2.0)}));
  CHECK(close(run("log1p"), {0, std::log1p(0.5), std::log(2.0), std::log(3.0)}));
  CHECK(close(run("expm1"), {0, std::expm1(0.5), std::expm1(1.0), std::expm1(2.0)}));
  CHECK(close(run("sqrt"), {0, std::sqrt(0.5), 1, std::sqrt(2.0)}));
  CHECK(close(run("rsqrt"), {kInf, 1 / std::sqrt(0.5), 1, 1 / std::sqrt(2.0)}));
  CHECK(close(run("logistic"),
              {0.5, 1 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(-2.0))}));
  CHECK(close(run("erf"), {0, std::erf(0.5), std::erf(1.0), std::erf(2.0)}));
  CHECK(close(run("square"), {0, 0.25, 1, 4}));
  Buffer r = apply_like("integer_pow", {x}, {{"y", 3}});
  CHECK(close(vals(r), {0, 0.125, 1, 8}));
  Buffer inv = apply_like("integer_pow", {f32({2}, {2.0f, 4.0f})}, {{"y", -2}});
  CHECK(close(vals(inv), {0.25, 0.0625}));
  CHECK(vals(apply_like("integer_pow", {x}, {{"y", 0}})) == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("unary kernels on f64 keep double precision") {
  Buffer x = f64({1}, {1e-10});
  CHECK(apply_like("expm1", {x}).element(0) == std::expm1(1e-10));
  CHECK(apply_like("exp", {f64({}, {1.0})}).element(0) == std::exp(1.0));
}

TEST_CASE("logistic does not overflow for large negative inputs") {
  Buffer x = f32({3}, {-1000.0f, 1000.0f, -20.0f});
  std::vector<double> y = vals(apply_like("logistic", {x}));
  CHECK(y[0] == 0.0);
  CHECK(y[1] == 1.0);
  CHECK(y[2] == Approx(2.0611536e-9).epsilon(1e-5));
}

TEST_CASE("abs, sign, neg, floor, ceil, round, is_finite, not") {
  Buffer x = f32({5}, {-1.5f, -0.0f, 0.0f, 2.5f, static_cast<float>(kNaN)});
  CHECK(vals(apply_like("abs", {x}))[0] == 1.5);
  std::vector<double> s = vals(apply_like("sign", {x}));
  CHECK(s[0] == -1);
  CHECK(std::signbit(s[1]));
  CHECK(s[2] == 0);
  CHECK(s[3] == 1);
  CHECK(std::isnan(s[4]));
  CHECK(vals(apply_like("neg", {f32({2}, {1, -2})})) == std::vector<double>{-1, 2});
  CHECK(vals(apply_like("floor", {f32({2}, {-1.5f, 1.5f})})) == std::vector<double>{-2, 1});
  CHECK(vals(apply_like("ceil", {f32({2}, {-1.5f, 1.5f})})) == std::vector<double>{-1, 2});
  Buffer h = f32({3}, {0.5f, 1.5f, -2.5f});
  CHECK(vals(apply_like("round", {h})) == std::vector<double>{1, 2, -3});  // away from zero
  CHECK(vals(apply_like("round", {h}, {{"rounding_method", 1}})) ==
        std::vector<double>{0, 2, -2});  // to nearest even
  Buffer fin = apply1("is_finite", {},
                      {f32({3}, {1.0f, static_cast<float>(kInf), static_cast<float>(kNaN)})},
                      ShapedArray(DType::bool_, {3}));
  CHECK(vals(fin) == std::vector<double>{1, 0, 0});
  CHECK(vals(apply_like("not", {boolean({2}, {true, false})})) == std::vector<double>{0, 1});
  CHECK(vals(apply_like("not", {i32({2}, {0, 5})})) == std::vector<double>{-1, -6});
}

TEST_CASE("integer unary kernels wrap instead of overflowing") {
  const int32_t min = std::numeric_limits<int32_t>::min();
  CHECK(vals(apply_like("neg", {i32({2}, {min, 3})})) == std::vector<double>{min, -3});
  CHECK(vals(apply_like("abs", {i32({3}, {min, -3, 4})})) == std::vector<double>{min, 3, 4});
  CHECK(vals(apply_like("sign", {i32({3}, {-7, 0, 9})})) == std::vector<double>{-1, 0, 1});
  CHECK(vals(apply_like("integer_pow", {i32({2}, {3, -2})}, {{"y", 3}})) ==
        std::vector<double>{27, -8});
  CHECK(vals(apply_like("square", {u8({2}, {15, 16})})) == std::vector<double>{225, 0});
  CHECK_THROWS_AS(apply_like("integer_pow", {i32({1}, {2})}, {{"y", -1}}), TypeError);
}

TEST_CASE("reduce_precision rounds mantissa and exponent") {
  // To bfloat16 (8 exponent bits, 7 mantissa bits): 1 + 2^-8 is a tie, rounds to even (1);
  // 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  Buffer x = f32({3}, {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-7f});
  Params bf16{{"exponent_bits", 8}, {"mantissa_bits", 7}};
  CHECK(vals(apply_like("reduce_precision", {x}, bf16)) ==
        std::vector<double>{1.0, 1.0 + 0x1p-6, 1.0 + 0x1p-7});
  // To half (5, 10): overflow to inf, flush below 2^-14 to zero, NaN stays NaN.
  Params half{{"exponent_bits", 5}, {"mantissa_bits", 10}};
  Buffer y = f32({5}, {70000.0f, -70000.0f, 1e-6f, 0.1f, static_cast<float>(kNaN)});
  std::vector<double> r = vals(apply_like("reduce_precision", {y}, half));
  CHECK(r[0] == kInf);
  CHECK(r[1] == -kInf);
  CHECK(r[2] == 0.0);
  CHECK(r[3] == 0.0999755859375);  // the nearest half to 0.1
  CHECK(std::isnan(r[4]));
  // f64 to f32's format.
  Buffer z = f64({1}, {0.1});
  CHECK(apply_like("reduce_precision", {z}, {{"exponent_bits", 8}, {"mantissa_bits", 23}})
            .element(0) == static_cast<double>(0.1f));
}

TEST_CASE("identity-like kernels forward their operands") {
  Buffer a = f32({2}, {1, 2});
  Buffer b = i32({}, {7});
  std::vector<Buffer> outs = apply("optimization_barrier", {}, {a, b}, {a.aval(), b.aval()});
  CHECK(outs[0].data() == a.data());
  CHECK(outs[1].data() == b.data());
  Buffer n = apply1("name", {{"name", "x"}}, {a}, a.aval());
  CHECK(n.data() == a.data());
  std::vector<Buffer> dp = apply("device_put", {}, {a, b}, {a.aval(), b.aval()});
  CHECK(vals(dp[1]) == std::vector<double>{7});
  Buffer c = apply1("copy", {}, {a}, a.aval());
  CHECK(c.data() != a.data());
  CHECK(vals(c) == std::vector<double>{1, 2});
}

TEST_CASE("binary arithmetic with broadcasting") {
  Buffer a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Buffer row = f32({1, 3}, {10, 20, 30});
  Buffer col = f32({2, 1}, {100, 200});
  Buffer s = f32_scalar(0.5f);
  ShapedArray out(DType::f32, {2, 3});
  CHECK(vals(apply1("add", {}, {a, row}, out)) == std::vector<double>{11, 22, 33, 14, 25, 36});
  CHECK(vals(apply1("sub", {}, {col, a}, out)) == std::vector<double>{99, 98, 97, 196, 195, 194});
  CHECK(vals(apply1("mul", {}, {s, a}, out)) == std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3});
  CHECK(vals(apply1("add", {}, {row, col}, out)) ==
        std::vector<double>{110, 120, 130, 210, 220, 230});
  CHECK(vals(apply1("div", {}, {a, s}, out)) == std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK(vals(apply1("add_any", {}, {a, a}, out)) == std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK(vals(apply1("max", {}, {a, f32_scalar(3.5f)}, out)) ==
        std::vector<double>{3.5, 3.5, 3.5, 4, 5, 6});
  CHECK(vals(apply1("min", {}, {a, f32_scalar(3.5f)}, out)) ==
        std::vector<double>{1, 2, 3, 3.5, 3.5, 3.5});
  CHECK(close(vals(apply1("pow", {}, {a, f32_scalar(2.0f)}, out)), {1, 4, 9, 16, 25, 36}));
  CHECK(close(vals(apply1("atan2", {}, {f32({2}, {1, -1}), f32({2}, {1, 1})},
                          ShapedArray(DType::f32, {2}))),
              {std::atan2(1.0, 1.0), std::atan2(-1.0, 1.0)}));
  CHECK(vals(apply1("rem", {}, {f32({2}, {5.5f, -5.5f}), f32_scalar(2.0f)},
                    ShapedArray(DType::f32, {2}))) == std::vector<double>{1.5, -1.5});
}

TEST_CASE("binary broadcasting rejects incompatible shapes and dtypes") {
  Buffer a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  ShapedArray out(DType::f32, {2, 3});
  CHECK_THROWS_AS(apply1("add", {}, {a, f32({3}, {1, 2, 3})}, out), TypeError);  // rank differs
  CHECK_THROWS_AS(apply1("add", {}, {a, f32({2, 2}, {1, 2, 3, 4})}, out), TypeError);
  CHECK_THROWS_WITH(apply1("add", {}, {a, i32_scalar(1)}, out),
                    Catch::Contains("add") && Catch::Contains("different dtypes"));
}

TEST_CASE("max and min propagate NaN") {
  Buffer a = f32({2}, {1.0f, static_cast<float>(kNaN)});
  Buffer b = f32({2}, {static_cast<float>(kNaN), 2.0f});
  ShapedArray out(DType::f32, {2});
  for (const char* op : {"max", "min"}) {
    std::vector<double> r = vals(apply1(op, {}, {a, b}, out));
    CHECK(std::isnan(r[0]));
    CHECK(std::isnan(r[1]));
  }
}

TEST_CASE("integer division truncates like C, with XLA's results at the edges") {
  ShapedArray out(DType::i32, {6});
  Buffer a = i32({6}, {7, -7, 7, -7, 5, std::numeric_limits<int32_t>::min()});
  Buffer b = i32({6}, {2, 2, -2, -2, 0, -1});
  CHECK(vals(apply1("div", {}, {a, b}, out)) ==
        std::vector<double>{3, -3, -3, 3, -1, std::numeric_limits<int32_t>::min()});
  CHECK(vals(apply1("rem", {}, {a, b}, out)) == std::vector<double>{1, -1, 1, -1, 5, 0});
  Buffer ua = u8({2}, {7, 9});
  Buffer ub = u8({2}, {2, 0});
  CHECK(vals(apply1("div", {}, {ua, ub}, ShapedArray(DType::u8, {2}))) ==
        std::vector<double>{3, 255});
  // Wrap-around on overflow.
  CHECK(vals(apply1("add", {}, {u8({1}, {250}), u8({1}, {10})}, ShapedArray(DType::u8, {1}))) ==
        std::vector<double>{4});
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(apply1("add", {}, {i64({}, {big}), i64({}, {1})}, ShapedArray(DType::i64, {}))
            .as<int64_t>()[0] == std::numeric_limits<int64_t>::min());
  CHECK(vals(apply1("mul", {}, {i32({1}, {65536}), i32({1}, {65536})},
                    ShapedArray(DType::i32, {1}))) == std::vector<double>{0});
}

TEST_CASE("logical and shift kernels") {
  ShapedArray bo(DType::bool_, {4});
  Buffer p = boolean({4}, {true, true, false, false});
  Buffer q = boolean({4}, {true, false, true, false});
  CHECK(vals(apply1("and", {}, {p, q}, bo)) == std::vector<double>{1, 0, 0, 0});
  CHECK(vals(apply1("or", {}, {p, q}, bo)) == std::vector<double>{1, 1, 1, 0});
  CHECK(vals(apply1("xor", {}, {p, q}, bo)) == std::vector<double>{0, 1, 1, 0});
  ShapedArray io(DType::i32, {3});
  CHECK(vals(apply1("and", {}, {i32({3}, {12, 10, -1}), i32({3}, {10, 6, 5})}, io)) ==
        std::vector<double>{8, 2, 5});
  CHECK(vals(apply1("shift_left", {}, {i32({3}, {1, 1, 1}), i32({3}, {4, 32, -1})}, io)) ==
        std::vector<double>{16, 0, 0});
  CHECK(vals(apply1("shift_right_arithmetic", {}, {i32({3}, {-16, -16, 16}), i32({3}, {2, 40, 2})},
                    io)) == std::vector<double>{-4, -1, 4});
  CHECK(vals(apply1("shift_right_logical", {}, {i32({2}, {-1, 16}), i32({2}, {28, 2})},
                    ShapedArray(DType::i32, {2}))) == std::vector<double>{15, 4});
  CHECK_THROWS_AS(apply1("and", {}, {f32_scalar(1), f32_scalar(1)}, ShapedArray(DType::f32, {})),
                  UnsupportedError);
}

TEST_CASE("comparisons produce bool, NaN compares unequal") {
  Buffer a = f32({4}, {1, 2, 3, static_cast<float>(kNaN)});
  Buffer b = f32_scalar(2.0f);
  ShapedArray out(DType::bool_, {4});
  CHECK(vals(apply1("eq", {}, {a, b}, out)) == std::vector<double>{0, 1, 0, 0});
  CHECK(vals(apply1("ne", {}, {a, b}, out)) == std::vector<double>{1, 0, 1, 1});
  CHECK(vals(apply1("lt", {}, {a, b}, out)) == std::vector<double>{1, 0, 0, 0});
  CHECK(vals(apply1("le", {}, {a, b}, out)) == std::vector<double>{1, 1, 0, 0});
  CHECK(vals(apply1("gt", {}, {a, b}, out)) == std::vector<double>{0, 0, 1, 0});
  CHECK(vals(apply1("ge", {}, {a, b}, out)) == std::vector<double>{0, 1, 1, 0});
  CHECK(vals(apply1("lt", {}, {i64({2}, {-5, 5}), i64({}, {0})}, ShapedArray(DType::bool_, {2}))) ==
        std::vector<double>{1, 0});
  CHECK(vals(apply1("eq", {}, {boolean({2}, {true, false}), boolean({}, {false})},
                    ShapedArray(DType::bool_, {2}))) == std::vector<double>{0, 1});
  // The output must be bool.
  CHECK_THROWS_AS(apply1("lt", {}, {a, b}, ShapedArray(DType::f32, {4})), TypeError);
}

TEST_CASE("pow with an integer exponent") {
  Buffer x = f32({3}, {2, 3, 4});
  Buffer n = i32({3}, {3, 2, -1});
  CHECK(close(vals(apply1("pow", {}, {x, n}, ShapedArray(DType::f32, {3}))), {8, 9, 0.25}));
}

TEST_CASE("select_n picks cases by a bool or int32 predicate") {
  Buffer c0 = f32({3}, {1, 2, 3});
  Buffer c1 = f32({3}, {10, 20, 30});
  Buffer c2 = f32({3}, {100, 200, 300});
  ShapedArray out(DType::f32, {3});
  CHECK(vals(apply1("select_n", {}, {boolean({3}, {true, false, true}), c0, c1}, out)) ==
        std::vector<double>{10, 2, 30});
  CHECK(vals(apply1("select_n", {}, {i32({3}, {2, 0, 1}), c0, c1, c2}, out)) ==
        std::vector<double>{100, 2, 30});
  CHECK(vals(apply1("select_n", {}, {boolean({}, {true}), c0, c1}, out)) ==
        std::vector<double>{10, 20, 30});
  CHECK(vals(apply1("select_n", {}, {i32_scalar(7), c0, c1, c2}, out)) ==  // clamped
        std::vector<double>{100, 200, 300});
  CHECK_THROWS_AS(apply1("select_n", {}, {i32({2}, {0, 1}), c0, c1}, out), TypeError);
}

TEST_CASE("clamp with scalar and array bounds") {
  Buffer x = f32({4}, {-2, 0.5f, 3, static_cast<float>(kNaN)});
  ShapedArray out(DType::f32, {4});
  std::vector<double> r = vals(apply1("clamp", {}, {f32_scalar(0), x, f32_scalar(1)}, out));
  CHECK(r[0] == 0);
  CHECK(r[1] == 0.5);
  CHECK(r[2] == 1);
  CHECK(std::isnan(r[3]));
  Buffer lo = f32({4}, {-3, 1, 0, 0});
  CHECK(vals(apply1("clamp", {}, {lo, f32({4}, {-2, 0.5f, 3, 0}), f32_scalar(2)}, out)) ==
        std::vector<double>{-2, 1, 2, 0});
  // lax.switch's pattern: clamp an int32 index.
  CHECK(vals(apply1("clamp", {}, {i32_scalar(0), i32({3}, {-1, 1, 5}), i32_scalar(2)},
                    ShapedArray(DType::i32, {3}))) == std::vector<double>{0, 1, 2});
}

TEST_CASE("convert_element_type between dtypes") {
  auto conv = [](Buffer b, DType t) {
    ShapedArray out(t, b.aval().shape);
    return apply1("convert_element_type", {{"new_dtype", t}, {"weak_type", false}}, {b}, out);
  };
  Buffer x = f32({6}, {1.7f, -1.7f, 3e9f, -3e9f, static_cast<float>(kNaN), 0.0f});
  CHECK(vals(conv(x, DType::i32)) ==
        std::vector<double>{1, -1, 2147483647, -2147483648.0, 0, 0});  // truncate, saturate
  CHECK(vals(conv(x, DType::bool_)) == std::vector<double>{1, 1, 1, 1, 1, 0});
  CHECK(vals(conv(f32({2}, {-1.0f, 300.0f}), DType::u8)) == std::vector<double>{0, 255});
  CHECK(vals(conv(boolean({2}, {true, false}), DType::f32)) == std::vector<double>{1, 0});
  CHECK(vals(conv(i32({2}, {258, -1}), DType::u8)) == std::vector<double>{2, 255});  // wraps
  CHECK(conv(f64({1}, {0.1}), DType::f32).element(0) == static_cast<double>(0.1f));
  Buffer big = i64({1}, {(int64_t{1} << 53) + 1});
  CHECK(conv(big, DType::i64).as<int64_t>()[0] == (int64_t{1} << 53) + 1);  // exact
  Buffer h = conv(f32({2}, {1.5f, 65504.0f}), DType::f16);
  CHECK(vals(h) == std::vector<double>{1.5, 65504.0});
  Buffer bf = conv(f32({1}, {1.0f + 0x1p-9f}), DType::bf16);
  CHECK(bf.element(0) == 1.0);
  CHECK(vals(conv(bf, DType::f32)) == std::vector<double>{1.0});
}

TEST_CASE("kernels reject 16-bit floats with UnsupportedError") {
  Buffer h = Buffer::full(ShapedArray(DType::f16, {2}), 1.0);
  CHECK_THROWS_WITH(apply_like("sin", {h}), Catch::Contains("interpreter") &&
                                                Catch::Contains("sin") && Catch::Contains("f16"));
  Buffer b = Buffer::full(ShapedArray(DType::bf16, {2}), 1.0);
  CHECK_THROWS_AS(apply1("add", {}, {b, b}, b.aval()), UnsupportedError);
  CHECK_THROWS_AS(apply_like("sin", {i32({1}, {1})}), UnsupportedError);  // float-only op
}
