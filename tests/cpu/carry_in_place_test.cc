// A loop's carry updated in its own buffer (compiler/cpu/carry_in_place.h): the peak of a scan
// whose body reads its carry and then sums into it holds one carry, not two; where the carry is
// still read afterwards, or carries trade places, results equal the interpreter's.
#include <catch2/catch.hpp>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

// A scan of `body` (over the constant w and the carry h, both f32[512,512]) three steps long.
std::string scan_program(const std::string& body) {
  return "{ lambda ; x:f32[512,512] w:f32[512,512]. let d:f32[512,512] = scan["
         "_split_transpose=False jaxpr={ lambda ; w:f32[512,512] h:f32[512,512]. let " +
         body +
         " } length=3 linear=(False, False) num_carry=1 num_consts=1 reverse=False unroll=1] w x "
         "in (d,) }";
}

const char* kDot =
    "t:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
    "preferred_element_type=float32] h w; ";

// Compiles and runs `program`, checks every output against the interpreter's, returns the peak.
size_t run_program(const std::string& program, uint32_t seed,
                   const lower::CompileOptions& options = {}) {
  JaxprRef j = parse_jaxpr(program);
  auto exe = lower::compile(*j, "t", options);
  const auto in = test::random_inputs(*j, -0.05, 0.05, seed);
  lower::RunStats stats;
  const auto out = exe->run(in, &stats);
  const auto want = runtime::eval_jaxpr(*j, in);
  REQUIRE(out.size() == want.size());
  for (size_t i = 0; i < out.size(); ++i) test::require_close(out[i], want[i]);
  return stats.peak_bytes;
}

size_t run_and_check(const std::string& body, uint32_t seed) {
  return run_program(scan_program(body), seed);
}

TEST_CASE("a scan's carry is summed into in place: one carry buffer at the body's peak") {
  const size_t mib = 512 * 512 * 4;
  // x and w, the carry, the product t, and the output: the sum reads the carry last and is
  // written over it. (Written to a fresh buffer, the sum would be one more array: 6 MiB.)
  const size_t peak = run_and_check(std::string(kDot) +
                                        "k:f32[512,512] = tanh t; y:f32[512,512] = add k h "
                                        "in (y,)",
                                    3);
  CHECK(peak <= 5 * mib + (64 << 10));
}

TEST_CASE("a carry read after the elementwise loop is not written over") {
  // tanh h is not the carry's last reader (the sum reads h after it): both stay correct.
  run_and_check(std::string(kDot) +
                    "k:f32[512,512] = tanh h; m:f32[512,512] = mul k t; y:f32[512,512] = add m h "
                    "in (y,)",
                4);
  // The carry read by a loop at another index (a transpose) is left alone too.
  run_and_check(
      "t:f32[512,512] = transpose[permutation=(1, 0)] h; y:f32[512,512] = add t h in (y,)", 5);
}

TEST_CASE("a segment's dying input that starts two carries returns one of them") {
  // Both carries start from a; each is updated in place, the first in a's buffer, the second in
  // a copy; returning both in a's buffer would overwrite one with the other.
  run_program(
      "{ lambda ; x:f32[512,512]. let a:f32[512,512] = sin x; "
      "d:f32[512,512] e:f32[512,512] = scan[_split_transpose=False "
      "jaxpr={ lambda ; p:f32[512,512] q:f32[512,512]. let "
      "s:f32[512,512] = add p 1.0:f32[]; t:f32[512,512] = mul q 2.0:f32[] in (s, t) } length=3 "
      "linear=(False, False) num_carry=2 num_consts=0 reverse=False unroll=1] a a in (d, e) }",
      9, {.max_whole_eqns = 0});
}

}  // namespace
}  // namespace cjax
