// passes/rematerialize.h: cheap values are recomputed just before their late readers (from
// values alive there anyway), the originals then serve only their first reader, call bodies are
// flattened first (except repeated ones), loop bodies are rewritten too, and every value stays
// the same, bit for bit.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "passes/pipeline.h"
#include "passes/rematerialize.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace rematerialize_test {
namespace {

// The eqns of `j` whose primitive is `prim`.
std::vector<const Eqn*> eqns_of(const Jaxpr& j, std::string_view prim) {
  std::vector<const Eqn*> out;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == prim) out.push_back(&e);
  return out;
}

// Index of the eqn that defines `v` in `j`, or -1.
int producer_index(const Jaxpr& j, const Var& v) {
  for (size_t i = 0; i < j.eqns.size(); ++i)
    for (const Var& o : j.eqns[i].outputs)
      if (o == v) return static_cast<int>(i);
  return -1;
}

void check_same_values(const Jaxpr& before, const Jaxpr& after, uint64_t seed) {
  const auto in = test::random_inputs(before, -1.0, 1.0, seed);
  const auto want = runtime::eval_jaxpr(before, in);
  const auto got = runtime::eval_jaxpr(after, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].aval().str_short() == want[i].aval().str_short());
    CHECK(std::memcmp(got[i].data(), want[i].data(), want[i].nbytes()) == 0);
  }
}

// A GELU-like layer and its backward in one program: t = tanh(h) is read by the forward right
// away and by the backward after a product; h is read by the backward too, so t can be made
// again there from h.
constexpr const char* kGeluLike =
    "{ lambda ; h:f32[128,256] w:f32[256,256] g:f32[128,256]. let "
    "t:f32[128,256] = tanh h; "
    "u:f32[128,256] = mul h t; "
    "p:f32[128,256] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
    "preferred_element_type=float32] u w; "
    "q:f32[128,256] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
    "preferred_element_type=float32] g w; "
    "s:f32[128,256] = sub 1.0:f32[] t; "
    "r:f32[128,256] = mul q s; "
    "v:f32[128,256] = mul r h "
    "in (p, v) }";

TEST_CASE(
    "rematerialize: a late reader of a cheap value gets its own copy, made from live values") {
  JaxprRef j = parse_jaxpr(kGeluLike);
  const Jaxpr out = rematerialize_cheap_values(*j, {.min_bytes = 0});
  // Two tanh now: the original, read by the forward's mul only, and a copy placed right before
  // the backward's `1 - t`.
  const std::vector<const Eqn*> tanhs = eqns_of(out, "tanh");
  REQUIRE(tanhs.size() == 2);
  const Var original = tanhs[0]->outputs[0], copy = tanhs[1]->outputs[0];
  const std::vector<const Eqn*> subs = eqns_of(out, "sub");
  REQUIRE(subs.size() == 1);
  CHECK(subs[0]->inputs[1].var() == copy);
  CHECK(producer_index(out, copy) + 1 == producer_index(out, subs[0]->outputs[0]));
  int readers_of_original = 0;
  for (const Eqn& e : out.eqns)
    for (const Atom& a : e.inputs) readers_of_original += a.is_var() && a.var() == original;
  CHECK(readers_of_original == 1);
  check_same_values(*j, out, 1);
}

TEST_CASE("rematerialize: no copy that would keep a dead array alive, nor of a small value") {
  // h's last reader is the forward's mul: a copy of t after the product would hold h longer.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; x:f32[128,256] w:f32[256,256] g:f32[128,256]. let "
      "h:f32[128,256] = sin x; "
      "t:f32[128,256] = tanh h; "
      "u:f32[128,256] = mul h t; "
      "p:f32[128,256] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] u w; "
      "q:f32[128,256] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] g w; "
      "r:f32[128,256] = mul q t "
      "in (p, r) }");
  // Unless h can be made again from x, an argument: then the copy is tanh(sin(x)). (h's own
  // second reader, next to its first with nothing but elementwise eqns between, gets none.)
  const Jaxpr out = rematerialize_cheap_values(*j, {.min_bytes = 0});
  CHECK(eqns_of(out, "tanh").size() == 2);
  CHECK(eqns_of(out, "sin").size() == 2);
  check_same_values(*j, out, 2);
  // A cone that would need the product p (not cheap) and q is never copied.
  JaxprRef k = parse_jaxpr(
      "{ lambda ; x:f32[128,256] w:f32[256,256]. let "
      "p:f32[128,256] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] x w; "
      "t:f32[128,256] = tanh p; "
      "q:f32[128,256] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] t w; "
      "r:f32[128,256] = mul q t "
      "in (r,) }");
  CHECK(eqns_of(rematerialize_cheap_values(*k, {.min_bytes = 0}), "tanh").size() == 1);
  // By default, arrays under 64 KiB are left alone (32 x 256 f32 is 32 KiB).
  std::string small = kGeluLike;
  for (size_t at; (at = small.find("[128,256]")) != std::string::npos;)
    small.replace(at, 9, "[32,256]");
  CHECK(eqns_of(rematerialize_cheap_values(*parse_jaxpr(small)), "tanh").size() == 1);
  CHECK(eqns_of(rematerialize_cheap_values(*parse_jaxpr(kGeluLike)), "tanh").size() == 2);
}

TEST_CASE("rematerialize: call bodies are flattened and loop bodies rewritten") {
  namespace np = cjax::numpy;
  // A checkpointed GELU layer scanned over: its gradient's scan body holds a remat2 call, and
  // reads GELU's tanh again after the product with the second weight's transpose.
  auto layer = checkpoint(
      [](const Array& h, const Array& w) {
        return std::pair{np::matmul(nn::gelu(np::matmul(h, w)), w), std::tuple<>{}};
      },
      policies::nothing_saveable());
  auto loss = [&](const Array& h, const Array& ws) {
    return np::sum(scan([&](const Array& c, const Array& w) { return layer(c, w); }, h, ws).first);
  };
  const Jaxpr j = make_jaxpr(grad(loss, {0, 1}))(ShapeDtype{DType::f32, {128, 256}},
                                                 ShapeDtype{DType::f32, {3, 256, 256}});
  const Jaxpr out = rematerialize_cheap_values(j, {.min_bytes = 0});
  const std::vector<const Eqn*> scans = eqns_of(out, "scan");
  REQUIRE(scans.size() == 2);
  const Jaxpr& backward_body = *scans[1]->params.get_jaxpr("jaxpr");
  CHECK(eqns_of(backward_body, "remat2").empty());    // flattened
  CHECK(eqns_of(backward_body, "tanh").size() >= 2);  // GELU's tanh made again
  check_same_values(j, out, 3);
}

TEST_CASE("rematerialize: prepare_for_lowering keeps repeated calls, their bodies rewritten") {
  namespace np = cjax::numpy;
  auto body = checkpoint([](const Array& x, const Array& w) {
    Array y = x;
    for (int i = 0; i < 8; ++i) y = np::tanh(np::matmul(y, w)) * np::cos(y) + y;
    return y;
  });
  const Jaxpr j = make_jaxpr(grad([&](const Array& x, const Array& w) {
    return np::sum(body(body(x, w), w));
  }))(ShapeDtype{DType::f32, {128, 256}}, ShapeDtype{DType::f32, {256, 256}});
  const Jaxpr kept = prepare_for_lowering(j, {.keep_repeated_calls = true});
  CHECK(!eqns_of(kept, "remat2").empty());
  CHECK(eqns_of(prepare_for_lowering(j), "remat2").empty());
  check_same_values(j, kept, 4);
}

}  // namespace
}  // namespace rematerialize_test
}  // namespace cjax
