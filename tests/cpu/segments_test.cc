// Long programs compiled as segments: equal layers share one compiled function, so the number of
// functions does not grow with depth; the plan frees each intermediate after its last reader;
// results equal the interpreter's.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "compiler/cpu/segments.h"
#include "ir/exact_text.h"
#include "ir/parse/parser.h"
#include "ir/rules/registry.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

namespace jnp = cjax::numpy;

// The chain: h = tanh(h @ W_i + b_i), width 16, batch 4, summed.
Jaxpr tanh_chain(int depth) {
  std::vector<Array> ws, bs;
  for (int i = 0; i < depth; ++i) {
    ws.push_back(jnp::zeros({16, 16}));
    bs.push_back(jnp::zeros({16}));
  }
  auto loss = [depth](const std::vector<Array>& w, const std::vector<Array>& b, const Array& x) {
    Array h = x;
    for (int i = 0; i < depth; ++i) h = jnp::tanh(jnp::dot(h, w[i]) + b[i]);
    return jnp::sum(h);
  };
  return make_jaxpr(loss)(ws, bs, jnp::zeros({4, 16}));
}

void require_all_close(const std::vector<runtime::Buffer>& got,
                       const std::vector<runtime::Buffer>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i);
    test::require_close(got[i], want[i]);
  }
}

TEST_CASE("a deep chain's layers share compiled functions: their number does not grow") {
  size_t functions_at_20 = 0;
  for (int depth : {20, 60}) {
    INFO("depth " << depth);
    const Jaxpr j = tanh_chain(depth);
    VjpResult p = vjp_jaxpr(j, {true});
    auto fwd = lower::compile(p.fwd, "chain", {.max_whole_eqns = 0});
    auto bwd = lower::compile(p.bwd, "chain", {.max_whole_eqns = 0});
    // One segment per dot at least; a handful of distinct functions whatever the depth.
    CHECK(fwd->compile_stats().steps >= static_cast<size_t>(depth));
    CHECK(bwd->compile_stats().steps >= static_cast<size_t>(depth));
    const size_t functions = fwd->compile_stats().functions + bwd->compile_stats().functions;
    CHECK(functions <= 12);
    if (depth == 20) functions_at_20 = functions;
    if (depth == 60) CHECK(functions == functions_at_20);

    const auto in = test::random_inputs(j, -0.5, 0.5, 7);
    auto f = fwd->run(in);
    require_all_close(f, runtime::eval_jaxpr(p.fwd, in));
    std::vector<runtime::Buffer> b_in(f.begin() + 1, f.end());
    b_in.push_back(runtime::Buffer::full(j.out_avals()[0], 1.0));
    require_all_close(bwd->run(b_in), runtime::eval_jaxpr(p.bwd, b_in));
  }
}

TEST_CASE("repeated layers or a long program are cut into segments, others compile whole") {
  // Three equal layers: cut, and each kind of segment compiled once.
  auto chain = lower::compile(tanh_chain(3), "chain");
  CHECK(chain->compile_stats().steps == 3);
  CHECK(chain->compile_stats().functions == 2);  // the layer, and the last one with the sum
  // No two segments alike: one function, one call.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[4,4] b:f32[4,4]. let c:f32[4,4] = sin a; "
      "d:f32[4,4] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] c b; e:f32[4,4] = cos d in (e,) }");
  auto whole = lower::compile(*j, "t");
  CHECK(whole->compile_stats().functions == 1);
  CHECK(whole->compile_stats().steps == 1);
  // The same program past the size limit: cut at the dot.
  auto cut = lower::compile(*j, "t", {.max_whole_eqns = 2});
  CHECK(cut->compile_stats().steps == 2);
  const auto in = test::random_inputs(*j, -0.5, 0.5, 11);
  require_all_close(cut->run(in), whole->run(in));
}

TEST_CASE("inputs, literals and repeated values come back from a segmented program") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = sin a; d:f32[3] = mul c b; "
      "e:f32[3] = cos d in (a, c, d, e, e, 1.0:f32[], c) }");
  auto exe = lower::compile(*j, "t", {.max_whole_eqns = 0, .max_segment_eqns = 1});
  CHECK(exe->compile_stats().steps == 4);  // three eqns and the literal
  const auto in = test::random_inputs(*j, -0.5, 0.5, 3);
  lower::RunStats stats;
  auto out = exe->run(in, &stats);
  require_all_close(out, runtime::eval_jaxpr(*j, in));
  CHECK(out[0].data() == in[0].data());
  CHECK(stats.output_bytes == 3 * 12 + 4);  // c, d, e and the literal, once each; not a
}

TEST_CASE("a segmented run frees each intermediate after its last reader") {
  // Ten 1 MiB elementwise steps in a row: whole or segmented, never all ten live at once.
  std::string text = "{ lambda ; v0:f32[512,512]. let v1:f32[512,512] = sin v0";
  for (int i = 2; i <= 10; ++i) text += fmt::format("; v{}:f32[512,512] = sin v{}", i, i - 1);
  text += " in (v10,) }";
  JaxprRef j = parse_jaxpr(text);
  auto exe = lower::compile(*j, "t", {.max_whole_eqns = 0, .max_segment_eqns = 1});
  CHECK(exe->compile_stats().steps == 10);
  CHECK(exe->compile_stats().functions == 1);  // ten equal segments
  const auto in = test::random_inputs(*j, -0.5, 0.5, 5);
  lower::RunStats stats;
  const auto out = exe->run(in, &stats);
  require_all_close(out, runtime::eval_jaxpr(*j, in));
  const size_t mib = 512 * 512 * 4;
  CHECK(stats.peak_bytes <= 3 * mib);
}

TEST_CASE("a loop is a segment of its own: what only the eqns before it read is freed first") {
  // a = x @ w starts one segment; c = tanh(a) @ w starts the next, which also reads a's maximum.
  // Cut there, a would be that segment's input and live through the scan after it; the scan is
  // a segment of its own, so a is freed before the scan runs.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; x:f32[512,512] w:f32[512,512]. let "
      "a:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] x w; b:f32[512,512] = tanh a; "
      "c:f32[512,512] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] b w; m:f32[] = reduce_max[axes=(0, 1)] a; "
      "d:f32[512,512] = scan[_split_transpose=False jaxpr={ lambda ; s:f32[] h:f32[512,512]. let "
      "g:f32[512,512] = mul h s; k:f32[512,512] = tanh g in (k,) } length=3 "
      "linear=(False, False) num_carry=1 num_consts=1 reverse=False unroll=1] m c in (d,) }");
  auto exe = lower::compile(*j, "t", {.max_whole_eqns = 0});
  CHECK(exe->compile_stats().steps == 3);
  const auto in = test::random_inputs(*j, -0.05, 0.05, 6);
  lower::RunStats stats;
  const auto out = exe->run(in, &stats);
  require_all_close(out, runtime::eval_jaxpr(*j, in));
  const size_t mib = 512 * 512 * 4;
  // During the scan: x, w, c (the first carry, and where the last one is returned: the scan's
  // segment is its last reader), the carry read and the carry written by an iteration; a held
  // through the scan would be one more, and so would a copy of c or an output buffer of its own.
  CHECK(stats.peak_bytes <= 5 * mib + (64 << 10));
}

TEST_CASE("a loop's segment runs in the buffers of the inputs it is the last to read") {
  // Two carries that trade places each step, both started from buffers the scan's segment is the
  // last to read, and both returned in them; a, also read after the scan, is not handed over.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; x:f32[512,512]. let a:f32[512,512] = sin x; b:f32[512,512] = cos x; "
      "c:f32[512,512] = exp x; "
      "d:f32[512,512] e:f32[512,512] f:f32[512,512] = scan[_split_transpose=False "
      "jaxpr={ lambda ; p:f32[512,512] q:f32[512,512] r:f32[512,512]. let "
      "s:f32[512,512] = add q 1.0:f32[]; t:f32[512,512] = sin p; u:f32[512,512] = mul r p "
      "in (s, t, u) } length=3 linear=(False, False, False) num_carry=3 num_consts=0 "
      "reverse=False unroll=1] a b c; g:f32[512,512] = add a d in (e, f, g) }");
  auto exe = lower::compile(*j, "t", {.max_whole_eqns = 0});
  const auto in = test::random_inputs(*j, -0.5, 0.5, 8);
  lower::RunStats stats;
  require_all_close(exe->run(in, &stats), runtime::eval_jaxpr(*j, in));
}

TEST_CASE("segment keys: equal layers share one, any difference in a literal or aval does not") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[]; c:f32[3] = mul b 2.0:f32[]; "
      "d:f32[3] = mul c 3.0:f32[]; e:f32[3] = sin d in (e,) }");
  const auto segments =
      lower::split_into_segments(*j, 1, [](const Eqn&, const Eqn&) { return false; });
  REQUIRE(segments.size() == 4);
  std::vector<std::string> keys;
  for (size_t k = 0; k < segments.size(); ++k)
    keys.push_back(lower::segment_key(*j, segments[k], k));
  CHECK(keys[0] == keys[1]);  // x * 2, twice
  CHECK(keys[1] != keys[2]);  // x * 3
  CHECK(keys[2] != keys[3]);
  // The key is the segment program's exact text.
  CHECK(keys[3] == exact_text(lower::segment_program(*j, segments[3])));
}

TEST_CASE("segments whose nested jaxprs hold constants never share a function") {
  // Two jit calls whose bodies look alike but close over constants: no text pins the values.
  auto body = std::make_shared<Jaxpr>();
  body->constvars = {Var(ShapedArray{DType::f32, {2}})};
  body->consts = {ConstValue{ShapedArray{DType::f32, {2}}, nullptr}};
  body->outvars = {body->constvars[0]};
  Jaxpr j;
  for (int i = 0; i < 2; ++i) {
    Eqn e;
    e.prim = &get_primitive("pjit");
    e.params.set("jaxpr", JaxprRef(body));
    e.outputs = {Var(ShapedArray{DType::f32, {2}})};
    j.eqns.push_back(e);
    j.outvars.push_back(e.outputs[0]);
  }
  const auto segments =
      lower::split_into_segments(j, 1, [](const Eqn&, const Eqn&) { return false; });
  REQUIRE(segments.size() == 2);
  CHECK(lower::segment_key(j, segments[0], 0) != lower::segment_key(j, segments[1], 1));
  CHECK_FALSE(exact_text(j).has_value());
}

}  // namespace
}  // namespace cjax
