// split_long_reductions (the GPU back end's): a reduction keeping few elements of many becomes
// levels of reductions over chunks, each reducing at most a chunk (plus one remainder) per output,
// and computes what the original computes: exactly for max and min, within rounding for sums.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "ir/parse/parser.h"
#include "ir/primitive.h"
#include "passes/split_reductions.h"
#include "runtime/interpreter.h"

namespace cjax {
namespace split_reductions_test {
namespace {

runtime::Buffer random_f32(const ShapedArray& a, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(a.size()));
  for (float& x : v) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  return runtime::Buffer::from_data<float>(a, v);
}

// The largest number of elements one output element of one reduction eqn reduces.
int64_t longest_reduction(const Jaxpr& j) {
  int64_t longest = 0;
  for (const Eqn& e : j.eqns)
    if (e.prim->name.starts_with("reduce_"))
      longest = std::max(
          longest, e.inputs[0].aval().size() / std::max<int64_t>(1, e.outputs[0].aval().size()));
  return longest;
}

void check_split(const std::string& text, bool exact) {
  INFO(text);
  JaxprRef j = parse_jaxpr(text);
  const Jaxpr split = split_long_reductions(*j);
  CHECK(longest_reduction(split) <= 64 + 1);
  REQUIRE(split.out_avals().size() == 1);
  CHECK(split.out_avals()[0].shape == j->out_avals()[0].shape);
  const runtime::Buffer x = random_f32(j->invars[0].aval(), 7);
  const auto want = runtime::eval_jaxpr(*j, std::vector<runtime::Buffer>{x});
  const auto got = runtime::eval_jaxpr(split, std::vector<runtime::Buffer>{x});
  const auto w = want[0].to_doubles(), g = got[0].to_doubles();
  REQUIRE(w.size() == g.size());
  for (size_t i = 0; i < w.size(); ++i) {
    INFO("element " << i);
    if (exact)
      CHECK(g[i] == w[i]);
    else
      CHECK(std::abs(g[i] - w[i]) <= 1e-5 * std::max(1.0, std::abs(w[i])));
  }
}

TEST_CASE("a loss summed over a whole batch becomes levels of chunk sums") {
  check_split(
      "{ lambda ; a:f32[64,512]. let b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a "
      "in (b,) }",
      false);
}

TEST_CASE("sizes that chunks do not divide keep their remainder, for sum, max and min") {
  for (const char* prim : {"reduce_sum", "reduce_max", "reduce_min"}) {
    const std::string p = prim;
    check_split("{ lambda ; a:f32[3,1000]. let b:f32[3] = " + p +
                    "[axes=(1,) out_sharding=None] a in (b,) }",
                p != "reduce_sum");
    check_split(
        "{ lambda ; a:f32[997]. let b:f32[] = " + p + "[axes=(0,) out_sharding=None] a in (b,) }",
        p != "reduce_sum");
  }
}

TEST_CASE("reduced axes in the middle are moved last first") {
  check_split(
      "{ lambda ; a:f32[4,300,5]. let b:f32[4,5] = reduce_sum[axes=(1,) out_sharding=None] a "
      "in (b,) }",
      false);
  check_split(
      "{ lambda ; a:f32[30,4,40]. let b:f32[4] = reduce_max[axes=(0, 2) out_sharding=None] a "
      "in (b,) }",
      true);
}

TEST_CASE("reductions that already run wide, or short, are left as they are") {
  for (const char* text :
       {"{ lambda ; a:f32[8192,64]. let b:f32[8192] = reduce_sum[axes=(1,) out_sharding=None] a "
        "in (b,) }",
        "{ lambda ; a:f32[4,200]. let b:f32[4] = reduce_sum[axes=(1,) out_sharding=None] a "
        "in (b,) }"}) {
    JaxprRef j = parse_jaxpr(text);
    CHECK(split_long_reductions(*j).eqns.size() == 1);
  }
}

}  // namespace
}  // namespace split_reductions_test
}  // namespace cjax
