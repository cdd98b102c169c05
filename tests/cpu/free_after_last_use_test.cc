// Compiled code frees each buffer after its last reader, inside one function and inside a loop's
// body, as the interpreter does: a chain of matrix products (runtime calls, which read their
// buffers through a list of pointers) never holds more than two of its intermediates.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <string>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace free_after_last_use_test {
namespace {

constexpr size_t kMiB = 512 * 512 * 4;  // one f32[512,512]

// `depth` products h = (h @ w) * c_i in a row, h and w f32[512,512], each c_i its own literal
// (so that no two steps are the same code, which would make them segments of their own): as
// the eqns of a program, they need w, h and two intermediates at a time.
std::string product_chain(int depth) {
  std::string eqns = "v0:f32[512,512] = tanh h";
  for (int i = 1; i <= depth; ++i)
    eqns += fmt::format(
        "; p{0}:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
        "preferred_element_type=float32] v{1} w; v{0}:f32[512,512] = mul p{0} {2}:f32[]",
        i, i - 1, 1.0 + 0.125 * i);
  return eqns;
}

void check_same_as_interpreter(const Jaxpr& j, const std::vector<runtime::Buffer>& in,
                               const std::vector<runtime::Buffer>& got) {
  const auto want = runtime::eval_jaxpr(j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
}

TEST_CASE("one compiled function frees each intermediate after its last reader") {
  JaxprRef j = parse_jaxpr("{ lambda ; w:f32[512,512] h:f32[512,512]. let " + product_chain(10) +
                           "; s:f32[] = reduce_sum[axes=(0, 1)] v10 in (s,) }");
  auto exe = lower::compile(*j, "t", {.max_whole_eqns = 100});
  REQUIRE(exe->compile_stats().functions == 1);
  const auto in = test::random_inputs(*j, -0.05, 0.05, 7);
  lower::RunStats stats;
  const auto out = exe->run(in, &stats);
  check_same_as_interpreter(*j, in, out);
  // The arguments and at most two products at once (all ten would be 20 MiB more).
  CHECK(stats.peak_bytes <= 2 * kMiB + 3 * kMiB);
}

TEST_CASE("a loop body frees each intermediate after its last reader, every iteration") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; w:f32[512,512] x:f32[512,512]. let y:f32[512,512] = scan[_split_transpose=False "
      "jaxpr={ lambda ; w:f32[512,512] h:f32[512,512]. let " +
      product_chain(6) +
      " in (v6,) } length=3 linear=(False, False) num_carry=1 num_consts=1 reverse=False "
      "unroll=1] w x in (y,) }");
  auto exe = lower::compile(*j, "t");
  const auto in = test::random_inputs(*j, -0.05, 0.05, 8);
  lower::RunStats stats;
  const auto out = exe->run(in, &stats);
  check_same_as_interpreter(*j, in, out);
  // The arguments, the carries and a few products at once; the body's thirteen intermediates
  // held to its end would be 13 MiB more.
  CHECK(stats.peak_bytes <= 2 * kMiB + 6 * kMiB);
}

// The peak bytes of one compiled run of `text` on random inputs, its results held to the
// interpreter's.
size_t checked_peak(const std::string& text, unsigned seed) {
  JaxprRef j = parse_jaxpr(text);
  auto exe = lower::compile(*j, "t");
  const auto in = test::random_inputs(*j, -0.05, 0.05, seed);
  lower::RunStats stats;
  const auto out = exe->run(in, &stats);
  check_same_as_interpreter(*j, in, out);
  return stats.peak_bytes;
}

TEST_CASE("an elementwise loop writes its result over the product it is the last to read") {
  // exp(x @ w) @ v: the exp reads the first product last, so it writes over it; the arguments
  // and one [512,512] intermediate at a time, where a fresh buffer for the exp would be two.
  const size_t peak = checked_peak(
      "{ lambda ; x:f32[512,512] w:f32[512,512] v:f32[512,1]. let "
      "a:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] x w; b:f32[512,512] = exp a; "
      "c:f32[512,1] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] b v in (c,) }",
      9);
  CHECK(peak <= 3 * kMiB + (64 << 10));
}

TEST_CASE(
    "a buffer a loop only reads is freed after its own last reader, not the loop's results'") {
  // A scan over the rows of tanh(x) returns their sum; two products follow. tanh(x) is dead once
  // the scan is done: the scan's result is a new array, not a view of it.
  const size_t peak = checked_peak(
      "{ lambda ; x:f32[512,512] w:f32[512,512]. let y:f32[512,512] = tanh x; z:f32[512] = "
      "broadcast_in_dim[broadcast_dimensions=() shape=(512,) sharding=None] 0.0:f32[]; "
      "c:f32[512] = scan[_split_transpose=False jaxpr={ lambda ; h:f32[512] r:f32[512]. let "
      "g:f32[512] = add h r in (g,) } length=512 linear=(False, False) num_carry=1 "
      "num_consts=0 reverse=False unroll=1] z y; "
      "a:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] x w; "
      "b:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] a w; s:f32[] = reduce_sum[axes=(0, 1)] b; "
      "t:f32[] = reduce_sum[axes=(0,)] c; u:f32[] = add s t in (u,) }",
      10);
  // The arguments and the two products; tanh(x) held to the end would be 1 MiB more.
  CHECK(peak <= 4 * kMiB + (64 << 10));
}

}  // namespace
}  // namespace free_after_last_use_test
}  // namespace cjax
