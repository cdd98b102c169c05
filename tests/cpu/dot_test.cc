// dot_general's two compiled forms (compiler/cpu/lower_dot.cc): a native loop nest and a call
// into OpenBLAS. Both equal the interpreter for every layout of the dimension numbers, and the
// default picks the loop nest for small products only.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

// Products with batch dims, transposed and several contracting dims, free dims on both sides.
const char* kLayouts =
    "{ lambda ; a:f32[6,4] b:f32[6,5] c:f64[2,3,4] d:f64[2,4,5] e:f32[3,4,5] f:f32[5,4,7] "
    "g:f32[2,3,4] h:f32[4,2,6]. let "
    "p:f32[4,5] = dot_general[dimension_numbers=(([0], [0]), ([], [])) "
    "preferred_element_type=float32] a b; "
    "q:f64[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0])) "
    "preferred_element_type=float64] c d; "
    "r:f32[3,7] = dot_general[dimension_numbers=(([1, 2], [1, 0]), ([], [])) "
    "preferred_element_type=float32] e f; "
    "s:f32[2,3,6] = dot_general[dimension_numbers=(([2], [0]), ([0], [1])) "
    "preferred_element_type=float32] g h "
    "in (p, q, r, s) }";

void check_against_interpreter(const Jaxpr& j, lower::DotPath path) {
  lower::CompileOptions options;
  options.dot_path = path;
  auto in = test::random_inputs(j, -2.0, 2.0, 5);
  auto got = lower::compile(j, "test", options)->run(in);
  auto want = runtime::eval_jaxpr(j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
}

size_t runtime_calls(const Jaxpr& j, lower::DotPath path) {
  lower::CompileOptions options;
  options.dot_path = path;
  return lower::compile(j, "test", options)->compile_stats().runtime_calls.size();
}

TEST_CASE("a dot is the interpreter's as a loop nest and as a BLAS call, in every layout") {
  JaxprRef j = parse_jaxpr(kLayouts);
  check_against_interpreter(*j, lower::DotPath::native);
  check_against_interpreter(*j, lower::DotPath::blas);
  CHECK(runtime_calls(*j, lower::DotPath::native) == 0);
  CHECK(runtime_calls(*j, lower::DotPath::blas) == 4);
}

TEST_CASE("by default, small products are loop nests and larger ones BLAS calls") {
  // 16x16x16 = 4096 multiply-adds (the largest loop nest) and 16x16x17 (one more row of k).
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[16,16] b:f32[16,16] c:f32[16,17] d:f32[17,16]. let "
      "e:f32[16,16] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] a b; "
      "f:f32[16,16] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] c d; g:f32[16,16] = add e f in (g,) }");
  lower::CompileOptions defaults;
  auto exe = lower::compile(*j, "test", defaults);
  REQUIRE(exe->compile_stats().runtime_calls.size() == 1);
  CHECK(exe->compile_stats().runtime_calls[0] == "dot_general via BLAS: 1 x [16x17] @ [17x16]");
  check_against_interpreter(*j, lower::DotPath::by_size);
}

TEST_CASE("a loop-nest dot does not absorb its operands' producers") {
  // Fused into the product's loops, the tanh would be computed once per output column: it stays
  // in a loop of its own, before the product's, whose innermost loop only multiplies and adds.
  const char* text =
      "{ lambda ; a:f32[3,4] b:f32[4,5]. let c:f32[3,4] = tanh a; "
      "d:f32[3,5] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] c b; e:f32[3,5] = sin d in (e,) }";
  JaxprRef j = parse_jaxpr(text);
  check_against_interpreter(*j, lower::DotPath::native);
  lower::CompileOptions native;
  native.dot_path = lower::DotPath::native;
  const std::string llvm = lower::lower_to_text(*j, lower::Stage::lowered, "test", native);
  const size_t division = llvm.find("llvm.fdiv");  // the tanh polynomial's one division
  REQUIRE(division != std::string::npos);
  CHECK(llvm.find("llvm.br", division) < llvm.find("llvm.fadd", division));
}

std::vector<std::string> blas_calls(const Jaxpr& j) {
  lower::CompileOptions options;
  options.dot_path = lower::DotPath::blas;
  return lower::compile(j, "test", options)->compile_stats().runtime_calls;
}

// Attention's products batch over (batch, heads) of [batch, seq, heads, head_dim] arrays: each
// head's matrix is a strided view, read in place, never packed. A contracting pair that does not
// flatten to one stride is still packed; every layout equals the loop nest.
TEST_CASE("a BLAS dot reads strided views in place and packs only what cannot be read so") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; q:f32[2,5,3,4] k:f32[2,6,3,4] p:f32[2,3,5,6] v:f64[2,6,3,4] w:f64[2,3,5,6] "
      "x:f32[5,3,4] y:f32[4,3,7] e:f32[3,4,5] f:f32[5,4,7]. let "
      "s:f32[2,3,5,6] = dot_general[dimension_numbers=(([3], [3]), ([0, 2], [0, 2])) "
      "preferred_element_type=float32] q k; "
      "o:f64[2,3,5,4] = dot_general[dimension_numbers=(([3], [1]), ([0, 1], [0, 2])) "
      "preferred_element_type=float64] w v; "
      "t:f32[3,5,7] = dot_general[dimension_numbers=(([2], [0]), ([1], [1])) "
      "preferred_element_type=float32] x y; "
      "u:f32[2,3,5,6] = mul s p; "
      "r:f32[3,7] = dot_general[dimension_numbers=(([1, 2], [1, 0]), ([], [])) "
      "preferred_element_type=float32] e f "
      "in (u, o, t, r) }");
  check_against_interpreter(*j, lower::DotPath::native);
  check_against_interpreter(*j, lower::DotPath::blas);
  CHECK(blas_calls(*j) ==
        std::vector<std::string>{"dot_general via BLAS: 6 x [5x4] strided @ [4x6]^T strided",
                                 "dot_general via BLAS: 6 x [5x6] @ [6x4] strided",
                                 "dot_general via BLAS: 3 x [5x4] strided @ [4x7] strided",
                                 "dot_general via BLAS: 1 x [3x20] @ [20x7] packed"});
}

// Found by the random programs: two outer products (no contracting dims) from one scalar, one
// of them broadcast. As loop nests accumulating into zero-filled outputs, the one fused into the
// broadcast read the other's values as its zeros (2x the product here). Fusion now leaves
// producers that read their outputs alone, and outer products are plain multiplications.
TEST_CASE("regression: outer products of one scalar, one broadcast, as loop nests") {
  check_against_interpreter(
      *parse_jaxpr("{ lambda ; f:f64[1] g:f64[1] h:f64[]. let "
                   "i:f64[1] = dot_general[dimension_numbers=(([], []), ([], [])) "
                   "preferred_element_type=float64] h g; "
                   "j:f64[1] = dot_general[dimension_numbers=(([], []), ([], [])) "
                   "preferred_element_type=float64] h f; "
                   "k:f64[1,3] = broadcast_in_dim[broadcast_dimensions=(0,) shape=(1, 3) "
                   "sharding=None] i in (j, k) }"),
      lower::DotPath::native);
}

}  // namespace
}  // namespace cjax
