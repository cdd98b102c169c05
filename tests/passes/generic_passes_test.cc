// dce, cse, inline, partial_eval and transpose on small jaxprs written as text.
#include <catch2/catch.hpp>

#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/inline.h"
#include "passes/partial_eval.h"
#include "passes/transpose.h"

using namespace cjax;

namespace {
Jaxpr parse(const char* text) {
  return *parse_jaxpr(text);
}
}  // namespace

TEST_CASE("dce drops eqns whose outputs nobody reads and reports used inputs") {
  Jaxpr j = parse("{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin a; d:f32[] = cos b in (c, d) }");
  DceResult r = dce(j, {true, false});
  CHECK(to_string(r.jaxpr) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin a in (c,) }");
  CHECK(r.used_inputs == std::vector<bool>{true, false});
}

TEST_CASE("cse merges identical eqns but never optimization barriers") {
  Jaxpr j = parse(
      "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = sin a; d:f32[3] = add b c; "
      "e:f32[3] = optimization_barrier a; f:f32[3] = optimization_barrier a; "
      "g:f32[3] = mul e f in (d, g) }");
  Jaxpr r = cse(j);
  verify(r);
  CHECK(to_string(r) ==
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sin a\n"
        "    c:f32[3] = add b b\n"
        "    d:f32[3] = optimization_barrier a\n"
        "    e:f32[3] = optimization_barrier a\n"
        "    f:f32[3] = mul d e\n"
        "  in (c, f) }");
}

TEST_CASE("cse distinguishes params and literals") {
  Jaxpr j = parse(
      "{ lambda ; a:f32[2,3]. let b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a; "
      "c:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a; d:f32[2,3] = mul a 2.0:f32[]; "
      "e:f32[2,3] = mul a 3.0:f32[] in (b, c, d, e) }");
  CHECK(cse(j).eqns.size() == 4);
}

TEST_CASE("inline replaces jit calls with fresh variables") {
  Jaxpr j = parse(
      "let f = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in\n"
      "{ lambda ; c:f32[]. let d:f32[] = jit[name=f jaxpr=f] c; e:f32[] = jit[name=f jaxpr=f] d in "
      "(e,) }");
  Jaxpr r = inline_calls(j);
  verify(r);
  CHECK(to_string(r) == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = sin b in (c,) }");
}

TEST_CASE("partial_eval splits known and unknown work and forwards residuals") {
  Jaxpr j = parse(
      "{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin a; d:f32[] = cos a; e:f32[] = mul b c; "
      "f:f32[] = mul e a in (d, f) }");
  PartialEvalResult r = partial_eval(j, {false, true}, {false, false});
  CHECK(r.out_unknown == std::vector<bool>{false, true});
  verify(r.known);
  verify(r.staged);
  CHECK(to_string(r.known) ==
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (c, b, a) }");
  CHECK(to_string(r.staged) ==
        "{ lambda ; a:f32[] b:f32[] c:f32[]. let\n"
        "    d:f32[] = mul c a\n"
        "    e:f32[] = mul d b\n"
        "  in (e,) }");
}

TEST_CASE("transpose accumulates cotangents and instantiates zeros") {
  Jaxpr j = parse(
      "{ lambda ; a:f32[3] b:f32[3] c:f32[3]. let d:f32[3] = mul b a; e:f32[3] = mul a b; "
      "f:f32[3] = add_any d e; g:f32[] = reduce_sum[axes=(0,) out_sharding=None] f in (g,) }");
  Jaxpr t = transpose_jaxpr(j, {false, true, true});
  verify(t);
  CHECK(to_string(t) ==
        "{ lambda ; a:f32[3] b:f32[]. let\n"
        "    c:f32[3] = broadcast_in_dim b\n"
        "    d:f32[3] = mul a c\n"
        "    e:f32[3] = mul c a\n"
        "    f:f32[3] = add_any d e\n"
        "    g:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "  in (f, g) }");
}
