// What compiled code hands a runtime call (RuntimeCall::invoke): each input's address and strides.
// A contiguous part of a larger buffer is read in place, a view of other strides is copied into
// row-major order by the call; either way the result is the interpreter's.
#include <catch2/catch.hpp>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

void check_against_interpreter(const std::string& text, size_t expected_calls) {
  INFO(text);
  JaxprRef j = parse_jaxpr(text);
  auto exe = lower::compile(*j, "views");
  CHECK(exe->compile_stats().runtime_calls.size() == expected_calls);
  const auto in = test::random_inputs(*j, -1.0, 1.0, 3);
  const auto got = exe->run(in);
  const auto want = runtime::eval_jaxpr(*j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
}

TEST_CASE("a BLAS dot reads a scan's slice of a computed stack in place, and a strided view") {
  // The scan's body multiplies its carry by the step's slice of `s`, a stack computed before the
  // loop (so not a function argument): a contiguous part of a buffer, at an offset per step.
  // (Products of more than 4096 multiply-adds: smaller ones are loop nests, not BLAS calls.)
  check_against_interpreter(
      "{ lambda ; a:f32[5,64,64] h:f32[32,64]. let s:f32[5,64,64] = sin a; "
      "o:f32[32,64] = scan[_split_transpose=False jaxpr={ lambda ; c:f32[32,64] w:f32[64,64]. "
      "let d:f32[32,64] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] c w; e:f32[32,64] = tanh d in (e,) } length=5 "
      "linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1] h s in (o,) }",
      1);
  // Inside the body, columns 16..79 of the carry: rows 96 apart, not row-major for [64,64].
  check_against_interpreter(
      "{ lambda ; w:f32[64,64] h:f32[64,96]. let o:f32[64,96] = scan[_split_transpose=False "
      "jaxpr={ lambda ; w:f32[64,64] c:f32[64,96]. let d:f32[64,64] = slice[limit_indices=(64, "
      "80) start_indices=(0, 16) strides=None] c; e:f32[64,64] = dot_general[dimension_numbers="
      "(([1], [0]), ([], [])) preferred_element_type=float32] d w; f:f32[64,64] = tanh e; "
      "g:f32[64,32] = slice[limit_indices=(64, 32) start_indices=(0, 0) strides=None] c; "
      "k:f32[64,96] = concatenate[dimension=1] f g in (k,) } length=3 linear=(False, False) "
      "num_carry=1 num_consts=1 reverse=False unroll=1] w h in (o,) }",
      1);
}

TEST_CASE("an interpreter kernel call reads a strided view copied into row-major order") {
  // cumsum runs as the interpreter's kernel; its operand is every other column of a sum.
  check_against_interpreter(
      "{ lambda ; a:f32[6,10] b:f32[6,10]. let c:f32[6,10] = add a b; d:f32[6,5] = slice["
      "limit_indices=(6, 10) start_indices=(0, 0) strides=(1, 2)] c; e:f32[6,5] = cumsum["
      "axis=1 reverse=False] d in (e,) }",
      1);
}

}  // namespace
}  // namespace cjax
