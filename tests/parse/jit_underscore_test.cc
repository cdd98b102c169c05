// A jit whose outputs are unused prints them as `_`, and so does its body (JAX's names): the
// reader resolves the body's `_` outputs by the jit's output types.
#include <catch2/catch.hpp>

#include "ir/parse/parser.h"
#include "ir/print/printer.h"

namespace cjax {
namespace {

TEST_CASE("a jit body's outputs read as _ take the values written _ of the call's output types") {
  // The body writes f32[] then f32[2] as `_`; the call's outputs list them the other way round.
  const std::string text =
      "{ lambda ; a:f32[] b:f32[2]. let\n"
      "    _:f32[2] _:f32[] c:f32[] = jit[\n"
      "      name=f\n"
      "      jaxpr={ lambda ; a:f32[] b:f32[2]. let\n"
      "          _:f32[] = sin a\n"
      "          _:f32[2] = cos b\n"
      "          c:f32[] = cos a\n"
      "        in (_, _, c) }\n"
      "    ] a b\n"
      "  in (c,) }";
  JaxprRef j = parse_jaxpr(text);
  const Jaxpr& body = *j->eqns[0].params.get_jaxpr("jaxpr");
  REQUIRE(body.outvars.size() == 3);
  CHECK(body.outvars[0].aval().shape == Shape{2});
  CHECK(body.outvars[0].var() == body.eqns[1].outputs[0]);  // cos b
  CHECK(body.outvars[1].var() == body.eqns[0].outputs[0]);  // sin a
  // And it prints back as it was written.
  CHECK(to_string(*parse_jaxpr(to_string(*j))) == to_string(*j));
}

}  // namespace
}  // namespace cjax
