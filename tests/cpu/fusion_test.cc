// How elementwise loops fuse (compiler/cpu/fusion.h): nothing is computed twice, a value is
// stored only where a loop of its own or a runtime call must read it, and the results still
// equal the interpreter's.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The program as LLVM-dialect text, after checking that it computes what the interpreter does.
std::string lowered(const std::string& text) {
  INFO(text);
  JaxprRef j = parse_jaxpr(text);
  auto in = test::random_inputs(*j, -2.0, 2.0, 11);
  auto got = lower::compile(*j, "test")->run(in);
  auto want = runtime::eval_jaxpr(*j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
  return lower::lower_to_text(*j, lower::Stage::lowered, "test");
}

// f32 tanh becomes a rational polynomial with one division: one fdiv per tanh computed.
const char* kDivision = "llvm.fdiv";
const char* kAlloc = "call @_mlir_memref_to_llvm_alloc";
// Each loop of a one-dimensional loop nest tests its induction variable once.
const char* kLoop = "llvm.icmp \"slt\"";

TEST_CASE("a GELU's tanh is computed once, in the loop that also writes it as a residual") {
  // j is both an output (a residual) and read by the loop computing m: one loop writes both.
  const std::string text = lowered(
      "{ lambda ; e:f32[4096]. let f:f32[4096] = integer_pow[y=3] e; "
      "g:f32[4096] = mul 0.044715:f32[] f; h:f32[4096] = add e g; "
      "i:f32[4096] = mul 0.7978846:f32[] h; j:f32[4096] = tanh i; "
      "k:f32[4096] = add 1.0:f32[] j; l:f32[4096] = mul 0.5:f32[] k; "
      "m:f32[4096] = mul e l in (j, m) }");
  CHECK(count(text, kDivision) == 1);
  CHECK(count(text, kLoop) == 1);
  CHECK(count(text, kAlloc) == 0);  // the loop writes straight to both outputs
}

TEST_CASE("a value read on both sides of a runtime call is computed once and stored once") {
  // l (a tanh) feeds the dot's operand p and, after the dot, the loop computing r. It is
  // computed in the loop that writes p, stored, and read back after the dot; o = (1 + l) / 2
  // is cheap and recomputed on both sides rather than stored.
  const std::string text = lowered(
      "{ lambda ; e:f32[32,64] w:f32[64,16] c:f32[32,16]. let l:f32[32,64] = tanh e; "
      "n:f32[32,64] = add 1.0:f32[] l; o:f32[32,64] = mul 0.5:f32[] n; "
      "p:f32[32,64] = mul e o; q:f32[32,16] = dot_general[dimension_numbers=(([1], [0]), "
      "([], [])) preferred_element_type=float32] p w; s:f32[32,64] = dot_general["
      "dimension_numbers=(([1], [1]), ([], [])) preferred_element_type=float32] c w; "
      "t:f32[32,64] = mul s o; u:f32[32,64] = mul t l; r:f32[32,64] = add u e in (q, r) }");
  CHECK(count(text, kDivision) == 1);
  // l, p (the dot's operand) and s (a dot's result): o is never stored.
  CHECK(count(text, kAlloc) == 3);
}

TEST_CASE("a cheap op read twice before a reduction fuses into both readers") {
  // b = 2a is recomputed in the reduction's loop and in the loop writing c.
  const std::string text = lowered(
      "{ lambda ; a:f32[16,32]. let b:f32[16,32] = mul 2.0:f32[] a; "
      "c:f32[16,32] = sin b; d:f32[16] = reduce_max[axes=(1,)] b in (c, d) }");
  CHECK(count(text, kAlloc) == 0);
  // An f32 sum keeps its partial sums in f64 (lower_reductions.cc): that is its one buffer.
  const std::string sum = lowered(
      "{ lambda ; a:f32[16,32]. let b:f32[16,32] = mul 2.0:f32[] a; "
      "c:f32[16,32] = sin b; d:f32[16] = reduce_sum[axes=(1,)] b in (c, d) }");
  CHECK(count(sum, kAlloc) == 1);
}

TEST_CASE("an expensive op read by loops on both sides of a dot is not recomputed") {
  // exp is not cheap: one loop computes it (and the dot operand), the later loop reads it.
  const std::string text = lowered(
      "{ lambda ; a:f32[8,8] w:f32[8,8]. let b:f32[8,8] = exp a; c:f32[8,8] = mul b a; "
      "d:f32[8,8] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] c w; e:f32[8,8] = mul d b in (e,) }");
  CHECK(count(text, "@expf") + count(text, "llvm.intr.exp") == 1);
}

TEST_CASE("an op reading one value twice fuses its producer") {
  const std::string text = lowered(
      "{ lambda ; a:f32[5,7]. let b:f32[5,7] = sin a; c:f32[5,7] = mul b b; "
      "d:f32[5,7] = add c b in (d, b) }");
  CHECK(count(text, kLoop) == 2);  // one loop nest of two loops
  CHECK(count(text, kAlloc) == 0);
}

TEST_CASE("a loop reading several values of one fused loop takes them from its own body") {
  // The checkpointed GELU's backward: the tanh l, 1 - l, (1 + l) / 2 and the recomputed GELU p
  // all come out of one fused loop, and bd reads three of them. Everything is one loop writing
  // p and bd; before, bd's loop read back three stored intermediates.
  const std::string text = lowered(
      "{ lambda ; e:f32[64,512] s:f32[64,512]. let f:f32[64,512] = integer_pow[y=3] e; "
      "g:f32[64,512] = integer_pow[y=2] e; h:f32[64,512] = mul 3.0:f32[] g; "
      "i:f32[64,512] = mul 0.044715:f32[] f; j:f32[64,512] = add e i; "
      "k:f32[64,512] = mul 0.7978846:f32[] j; l:f32[64,512] = tanh k; "
      "m:f32[64,512] = sub 1.0:f32[] l; n:f32[64,512] = add 1.0:f32[] l; "
      "o:f32[64,512] = mul 0.5:f32[] n; p:f32[64,512] = mul e o; t:f32[64,512] = mul e s; "
      "u:f32[64,512] = mul s o; v:f32[64,512] = mul 0.5:f32[] t; w:f32[64,512] = mul v m; "
      "x:f32[64,512] = mul w l; y:f32[64,512] = add_any w x; "
      "z:f32[64,512] = mul 0.7978846:f32[] y; ba:f32[64,512] = add_any u z; "
      "bb:f32[64,512] = mul 0.044715:f32[] z; bc:f32[64,512] = mul bb h; "
      "bd:f32[64,512] = add_any ba bc in (p, bd) }");
  CHECK(count(text, kDivision) == 1);
  CHECK(count(text, kLoop) == 2);
  CHECK(count(text, kAlloc) == 0);
}

TEST_CASE("long loops run in chunks of their innermost dimension, ragged ends included") {
  // Over 2^18 elements, so parallel: 2 x 131075 leaves a partial last chunk (131075 is not a
  // multiple of 4096), 524288 is one dimension, and 8 x 64 x 1024 has a short innermost one.
  lowered(
      "{ lambda ; a:f32[2,131075] b:f32[524288] c:f64[8,64,1024]. let "
      "d:f32[2,131075] = tanh a; e:f32[2,131075] = mul d a; f:f32[524288] = logistic b; "
      "g:f64[8,64,1024] = sin c; h:f64[8,64,1024] = mul g 3.0:f64[] in (e, f, h) }");
}

TEST_CASE("a reduction over long rows runs its rows on both threads, ragged chunks included") {
  // Few long rows (a chunk per row), many short rows (chunks of 1365 rows, the last shorter),
  // and rows of a matrix: each over 2^18 elements read, so its rows are split across threads.
  const std::string text = lowered(
      "{ lambda ; a:f32[3,100000] b:f64[100001,3] c:f32[512,1024]. let "
      "d:f32[3] = reduce_sum[axes=(1,)] a; e:f64[100001] = reduce_max[axes=(1,)] b; "
      "f:f32[512] = reduce_sum[axes=(1,)] c in (d, e, f) }");
  CHECK(count(text, "llvm.call @mlirAsyncRuntimeCreateGroup") == 3);
}

}  // namespace
}  // namespace cjax
