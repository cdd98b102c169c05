// One small program per primitive (or family), compiled and compared with the interpreter on
// seeded random inputs: native rules, BLAS dots in every layout, and interpreter-kernel calls.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <random>

#include "compiler/cpu/executable.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

void check(const std::string& text, double lo = -2.0, double hi = 2.0) {
  INFO(text);
  JaxprRef j = parse_jaxpr(text);
  auto in = test::random_inputs(*j, lo, hi, 7);
  auto exe = lower::compile(*j, "test");
  auto got = exe->run(in);
  auto want = runtime::eval_jaxpr(*j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
}

TEST_CASE("elementwise float primitives compile natively and match the interpreter") {
  for (const char* p :
       {"add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem", "nextafter", "add_any"})
    check(fmt::format("{{ lambda ; a:f32[3,4] b:f32[3,4]. let c:f32[3,4] = {} a b in (c,) }}", p),
          0.5, 2.0);
  for (const char* p :
       {"neg",   "abs",      "sign", "floor", "ceil", "exp",  "exp2", "expm1",  "log",   "log1p",
        "tanh",  "logistic", "sin",  "cos",   "tan",  "asin", "acos", "atan",   "sinh",  "cosh",
        "asinh", "atanh",    "sqrt", "rsqrt", "cbrt", "erf",  "erfc", "lgamma", "square"})
    check(fmt::format("{{ lambda ; a:f32[5] b:f64[2,3]. let c:f32[5] = {0} a; d:f64[2,3] = {0} b "
                      "in (c, d) }}",
                      p),
          0.05, 0.95);
  check("{ lambda ; a:f32[4]. let b:f32[4] = acosh a in (b,) }", 1.5, 4.0);
  check("{ lambda ; a:f32[6]. let b:f32[6] = round[rounding_method=1] a in (b,) }", -3, 3);
  check("{ lambda ; a:f32[6]. let b:f32[6] = round[rounding_method=0] a in (b,) }", -3, 3);
  check(
      "{ lambda ; a:f32[6]. let b:f32[6] = integer_pow[y=3] a; c:f32[6] = integer_pow[y=-2] a "
      "in (b, c) }",
      0.5, 2);
  check("{ lambda ; a:f64[6]. let b:bool[6] = is_finite a in (b,) }");
  check(
      "{ lambda ; a:f32[3] b:f32[]. let c:f32[3] = mul a b; d:f32[3] = add c 2.0:f32[] in (d,) }");
}

TEST_CASE("comparisons, selects, conversions and integer ops match the interpreter") {
  for (const char* p : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    check(fmt::format("{{ lambda ; a:f32[7] b:f32[7]. let c:bool[7] = {} a b in (c,) }}", p));
    check(fmt::format("{{ lambda ; a:i32[7] b:i32[7]. let c:bool[7] = {} a b in (c,) }}", p));
    check(fmt::format("{{ lambda ; a:u8[7] b:u8[7]. let c:bool[7] = {} a b in (c,) }}", p));
  }
  for (const char* p : {"add", "sub", "mul", "max", "min", "and", "or", "xor", "div", "rem",
                        "shift_left", "shift_right_arithmetic"})
    check(fmt::format("{{ lambda ; a:i32[6] b:i32[6]. let c:i32[6] = {} a b in (c,) }}", p));
  check(
      "{ lambda ; a:i64[6]. let b:i64[6] = neg a; c:i64[6] = abs a; d:i64[6] = not a; "
      "e:i64[6] = population_count a in (b, c, d, e) }");
  check("{ lambda ; a:bool[5] b:bool[5]. let c:bool[5] = and a b; d:bool[5] = not a in (c, d) }");
  check("{ lambda ; p:bool[4] a:f32[4] b:f32[4]. let c:f32[4] = select_n p a b in (c,) }");
  check(
      "{ lambda ; p:i32[4] a:f32[4] b:f32[4] c:f32[4]. let q:i32[4] = clamp 0:i32[] p 2:i32[]; "
      "d:f32[4] = select_n q a b c in (d,) }");
  check("{ lambda ; lo:f32[] a:f32[5] hi:f32[]. let b:f32[5] = clamp lo a hi in (b,) }");
  check(
      "{ lambda ; a:f32[5]. let b:f64[5] = convert_element_type[new_dtype=float64 "
      "weak_type=False] a; c:i32[5] = convert_element_type[new_dtype=int32 weak_type=False] a; "
      "d:bool[5] = convert_element_type[new_dtype=bool weak_type=False] a in (b, c, d) }",
      -4, 4);
  check(
      "{ lambda ; a:i32[5] b:u8[5]. let c:f32[5] = convert_element_type[new_dtype=float32 "
      "weak_type=False] a; d:i64[5] = convert_element_type[new_dtype=int64 weak_type=False] b; "
      "e:i8[5] = convert_element_type[new_dtype=int8 weak_type=False] a in (c, d, e) }");
}

TEST_CASE("shape primitives and reductions match the interpreter") {
  check(
      "{ lambda ; a:f32[3] b:f32[1,4]. let c:f32[2,3,4] = "
      "broadcast_in_dim[broadcast_dimensions=(1,) "
      "shape=(2, 3, 4) sharding=None] a; d:f32[3,4] = broadcast_in_dim[broadcast_dimensions=(0, 1) "
      "shape=(3, 4) sharding=None] b in (c, d) }");
  check(
      "{ lambda ; a:f32[2,3,4]. let b:f32[4,2,3] = transpose[permutation=(2, 0, 1)] a; "
      "c:f32[6,4] = reshape[dimensions=None new_sizes=(6, 4) sharding=None] a; "
      "d:f32[24] = reshape[dimensions=None new_sizes=(24,) sharding=None] a; "
      "e:f32[2,3,4] = rev[dimensions=(0, 2)] a in (b, c, d, e) }");
  check(
      "{ lambda ; a:f32[1,3,1]. let b:f32[3] = squeeze[dimensions=(0, 2)] a; "
      "c:f32[1,1,3,1] = expand_dims[dimensions=(0,)] a in (b, c) }");
  check(
      "{ lambda ; a:f32[1]. let b:f32[] = reshape[dimensions=None new_sizes=() sharding=None] a; "
      "c:f32[1,1] = reshape[dimensions=None new_sizes=(1, 1) sharding=None] b in (b, c) }");
  check(
      "{ lambda ; . let a:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] ; "
      "b:f32[5] = iota[dimension=0 dtype=float32 shape=(5,) sharding=None]  in (a, b) }");
  check(
      "{ lambda ; a:f32[6,5]. let b:f32[2,2] = slice[limit_indices=(5, 4) start_indices=(1, 1) "
      "strides=(2, 2)] a; c:f32[3,5] = slice[limit_indices=(3, 5) start_indices=(0, 0) "
      "strides=None] a in (b, c) }");
  check(
      "{ lambda ; a:f32[2,3] b:f32[2,1]. let c:f32[2,7] = concatenate[dimension=1] a b a in (c,) "
      "}");
  check(
      "{ lambda ; a:f32[2,3]. let b:f32[4,6] = pad[padding_config=((1, 1, 0), (0, 1, 1))] a "
      "0.0:f32[] "
      "in (b,) }");
  for (const char* r : {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}) {
    check(fmt::format("{{ lambda ; a:f32[3,4,5]. let b:f32[4] = {0}[axes=(0, 2)] a; c:f32[] = "
                      "{0}[axes=(0, 1, 2)] a in (b, c) }}",
                      r),
          0.5, 1.5);
    check(fmt::format("{{ lambda ; a:i32[3,4]. let b:i32[3] = {}[axes=(1,)] a in (b,) }}", r));
  }
  check(
      "{ lambda ; a:bool[3,4]. let b:bool[3] = reduce_or[axes=(1,)] a; c:bool[4] = "
      "reduce_and[axes=(0,)] a in (b, c) }");
  check(
      "{ lambda ; a:f32[3,4]. let b:i32[3] = argmax[axes=(1,) index_dtype=int32] a; "
      "c:f32[3,4] = cumsum[axis=1 reverse=False] a in (b, c) }");
}

TEST_CASE("pad compiles natively: edges, interior padding, cropping, every element cropped") {
  const char* configs[][2] = {
      {"f32[4,6]", "((1, 1, 0), (0, 1, 1))"},     // edges and interior
      {"f32[1,2]", "((-1, 0, 0), (-2, 1, 0))"},   // cropped from the low edges
      {"f32[1,3]", "((0, -2, 1), (-1, -1, 1))"},  // interior padding, then cropped
      {"f32[2,3]", "((0, 0, 0), (-4, 0, 2))"},    // cropping into the interior
      {"f32[2,4]", "((0, 0, 0), (-4, 5, 0))"},    // every operand element cropped
  };
  for (const auto& [out, config] : configs) {
    const std::string text = fmt::format(
        "{{ lambda ; a:f32[2,3] v:f32[]. let b:{} = pad[padding_config={}] a v in (b,) }}", out,
        config);
    INFO(text);
    JaxprRef j = parse_jaxpr(text);
    auto exe = lower::compile(*j, "test");
    CHECK(exe->compile_stats().runtime_calls.empty());
    check(text);
  }
  check(
      "{ lambda ; a:i32[3] v:i32[]. let b:i32[8] = pad[padding_config=((2, 1, 1),)] a v in (b,) }");
  check("{ lambda ; a:f32[] v:f32[]. let b:f32[] = pad[padding_config=()] a v in (b,) }");
}

TEST_CASE("squeeze and expand_dims and reshape of a slice compile natively") {
  // squeeze's and expand_dims' `dimensions` name unit dims (they once sent both to the
  // interpreter's kernel, taken for reshape's permutation); a squeeze or expand_dims of a strided
  // slice is one collapse or expansion, a view; a reshape that merges non-contiguous dims copies.
  const char* programs[] = {
      "{ lambda ; a:f32[4,3,5] . let b:f32[4,1,5] = slice[limit_indices=(4, 2, 5) "
      "start_indices=(0, 1, 0) strides=None] a; c:f32[4,5] = squeeze[dimensions=(1,)] b; "
      "d:f32[4,5] = mul c 2.0:f32[] in (d,) }",
      "{ lambda ; a:f32[4,3,5] . let b:f32[4,2,5] = slice[limit_indices=(4, 3, 5) "
      "start_indices=(0, 1, 0) strides=None] a; c:f32[4,1,2,5,1] = expand_dims[dimensions=(1, "
      "4)] b in (c,) }",
      "{ lambda ; a:f32[4,3,5] . let b:f32[4,2,5] = slice[limit_indices=(4, 3, 5) "
      "start_indices=(0, 1, 0) strides=None] a; c:f32[4,10] = reshape[dimensions=None "
      "new_sizes=(4, 10) sharding=None] b in (c,) }",
      "{ lambda ; a:f32[4,3,6] . let b:f32[4,2,6] = slice[limit_indices=(4, 3, 6) "
      "start_indices=(0, 1, 0) strides=None] a; c:f32[4,2,2,3] = reshape[dimensions=None "
      "new_sizes=(4, 2, 2, 3) sharding=None] b in (c,) }",
      "{ lambda ; a:f32[2,3,4] . let c:f32[4,6] = reshape[dimensions=None new_sizes=(4, 6) "
      "sharding=None] a in (c,) }",
  };
  for (const char* text : programs) {
    INFO(text);
    JaxprRef j = parse_jaxpr(text);
    CHECK(lower::compile(*j, "test")->compile_stats().runtime_calls.empty());
    check(text);
  }
}

TEST_CASE("dot_general through BLAS in every operand layout matches the interpreter's loops") {
  // f64 keeps the comparison tight; each layout takes a different path of the BLAS plan.
  check(
      "{ lambda ; a:f64[4,5] b:f64[5,3]. let c:f64[4,3] = dot_general[dimension_numbers=(([1], "
      "[0]), "
      "([], [])) preferred_element_type=float64] a b in (c,) }");
  check(
      "{ lambda ; a:f64[5,4] b:f64[3,5]. let c:f64[4,3] = dot_general[dimension_numbers=(([0], "
      "[1]), "
      "([], [])) preferred_element_type=float64] a b in (c,) }");
  check(
      "{ lambda ; a:f64[2,4,5] b:f64[2,5,3]. let c:f64[2,4,3] = "
      "dot_general[dimension_numbers=(([2], "
      "[1]), ([0], [0])) preferred_element_type=float64] a b in (c,) }");
  check(
      "{ lambda ; a:f64[4,2,5] b:f64[3,5,2]. let c:f64[2,4,3] = "
      "dot_general[dimension_numbers=(([2], "
      "[1]), ([1], [2])) preferred_element_type=float64] a b in (c,) }");
  check(
      "{ lambda ; a:f64[3,4,5] b:f64[5,3,2]. let c:f64[4,2] = dot_general[dimension_numbers=(([0, "
      "2], "
      "[1, 0]), ([], [])) preferred_element_type=float64] a b in (c,) }");
  check(
      "{ lambda ; a:f64[6] b:f64[6]. let c:f64[] = dot_general[dimension_numbers=(([0], [0]), "
      "([], [])) preferred_element_type=float64] a b in (c,) }");
  check(
      "{ lambda ; a:f32[64,512] b:f32[512,96]. let c:f32[64,96] = "
      "dot_general[dimension_numbers=(([1], "
      "[0]), ([], [])) preferred_element_type=float32] a b in (c,) }");
  check(
      "{ lambda ; a:i32[3,4] b:i32[4,2]. let c:i32[3,2] = dot_general[dimension_numbers=(([1], "
      "[0]), "
      "([], [])) preferred_element_type=int32] a b in (c,) }");
}

TEST_CASE("a transposed dot is computed as the swapped dot, with the same values") {
  const char* text =
      "{ lambda ; a:f64[6,4] b:f64[6,5] c:f64[2,3,4] d:f64[2,4,5]. let "
      "p:f64[4,5] = dot_general[dimension_numbers=(([0], [0]), ([], [])) "
      "preferred_element_type=float64] a b; q:f64[5,4] = transpose[permutation=(1, 0)] p; "
      "r:f64[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0])) "
      "preferred_element_type=float64] c d; s:f64[2,5,3] = transpose[permutation=(0, 2, 1)] r; "
      "u:f64[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0])) "
      "preferred_element_type=float64] c d; t:f64[3,2,5] = transpose[permutation=(1, 0, 2)] u "
      "in (q, s, t) }";
  check(text);
  lower::CompileOptions blas;  // products this small would be loop nests by size
  blas.dot_path = lower::DotPath::blas;
  const std::string mlir = lower::lower_to_text(*parse_jaxpr(text), lower::Stage::mlir, "", blas);
  // q and s fold into their dots; t (not a swap of free dims) stays one copy loop.
  size_t generics = 0;
  for (size_t at = mlir.find("linalg.generic"); at != std::string::npos;
       at = mlir.find("linalg.generic", at + 1))
    ++generics;
  CHECK(generics == 1);
}

TEST_CASE("an output that is an input, a literal or returned twice is written to each buffer") {
  check("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (a, b, b, 1.0:f32[]) }");
}

TEST_CASE("compile errors name the primitive and the program") {
  JaxprRef j = parse_jaxpr("{ lambda ; a:f16[3]. let b:f16[3] = sin a in (b,) }");
  REQUIRE_THROWS_AS(lower::compile(*j, "half.jaxpr"), UnsupportedError);
  REQUIRE_THROWS_WITH(lower::compile(*j, "half.jaxpr"),
                      Catch::Contains("f16") && Catch::Contains("argument"));
}

TEST_CASE("running with wrong arguments is a TypeError, not a crash") {
  JaxprRef j = parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }");
  auto exe = lower::compile(*j, "t");
  auto wrong = runtime::Buffer::zeros(ShapedArray{DType::f32, {4}});
  REQUIRE_THROWS_WITH(exe->run(std::vector{wrong}),
                      Catch::Contains("argument 0 has type f32[4], expected f32[3]"));
  REQUIRE_THROWS_AS(exe->run({}), TypeError);
}

TEST_CASE("an error inside a runtime call is rethrown after the compiled call returns") {
  // dynamic_slice with a start index operand runs the interpreter's kernel; convert with an
  // unsupported target dtype fails inside it.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = atan2 a b; d:i32[] = shift_left 1:i32[] "
      "2:i32[] "
      "in (c,) }");
  auto exe = lower::compile(*j, "t");
  REQUIRE(exe->run(test::random_inputs(*j, 0.1, 1, 1)).size() == 1);
}

TEST_CASE("run reports the outputs' bytes and the peak bytes of the call") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[256,256] b:f32[256,256]. let c:f32[256,256] = "
      "dot_general[dimension_numbers=(([1], "
      "[0]), ([], [])) preferred_element_type=float32] a b; d:f32[256,256] = tanh c; e:f32[] = "
      "reduce_sum[axes=(0, 1)] d in (e,) }");
  auto exe = lower::compile(*j, "t");
  auto in = test::random_inputs(*j, -1, 1, 3);
  lower::RunStats stats;
  exe->run(in, &stats);
  CHECK(stats.output_bytes == 4);
  // The two arguments plus at least the dot's 256 KiB intermediate were live at once.
  CHECK(stats.peak_bytes >= 3 * 256 * 256 * 4);
}

}  // namespace
}  // namespace cjax
