// remat2 through vjp: the tutorial's f2 (jax.checkpoint around each call of g), written as the
// jaxpr make_jaxpr(f2) gives, saves exactly what JAX reports (jax-outputs.md §2.3).
#include <catch2/catch.hpp>

#include "ir/parse/parser.h"
#include "ir/primitive.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/dce.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"

using namespace cjax;

namespace {

std::string layer(const char* out, const char* w, const char* x, const char* aval_w,
                  const char* aval_x, const char* aval_out) {
  return std::string("    ") + out + ":" + aval_out +
         " = remat2[\n      differentiated=False\n      jaxpr={ lambda ; p:" + aval_w +
         " q:" + aval_x + ". let\n          r:" + aval_out +
         " = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
         "preferred_element_type=float32] p q\n          s:" +
         aval_out +
         " = sin r\n        in (s,) }\n      policy=None\n      prevent_cse=True\n    ] " + w +
         " " + x + "\n";
}

std::string tutorial_f2() {
  return "{ lambda ; a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4]. let\n" +
         layer("e", "a", "d", "f32[5,4]", "f32[4]", "f32[5]") +
         layer("f", "b", "e", "f32[6,5]", "f32[5]", "f32[6]") +
         layer("g", "c", "f", "f32[7,6]", "f32[6]", "f32[7]") + "  in (g,) }";
}

}  // namespace

TEST_CASE("checkpointing each layer saves the arguments and the layer outputs") {
  JaxprRef f = parse_jaxpr(tutorial_f2());
  VjpResult r = vjp_jaxpr(*f);
  verify(r.fwd);
  verify(r.bwd);
  auto res =
      saved_residuals(r.fwd, r.num_residuals, std::vector<std::string>{"W1", "W2", "W3", "x"});
  std::vector<std::string> got;
  for (const auto& s : res)
    got.push_back(s.aval.str_short() + " " +
                  s.description.substr(0, s.description.find(" from /")));
  std::vector<std::string> want{
      "f32[5,4] from the argument W1",     "f32[6,5] from the argument W2",
      "f32[7,6] from the argument W3",     "f32[4] from the argument x",
      "f32[5] output of sin from unknown", "f32[6] output of sin from unknown"};
  CHECK(got == want);
  // The backward program recomputes each layer inside a differentiated remat2.
  std::string bwd = to_string(r.bwd);
  CHECK(bwd.find("remat2[\n      differentiated=True") != std::string::npos);
}

TEST_CASE("unused outputs and zero cotangents are pruned from call bodies") {
  // A checkpoint with two outputs of which only the first is used: dce drops the second from the
  // remat2 body, and the transposed body returns no zero cotangents.
  JaxprRef f = parse_jaxpr(
      "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] d:f32[3] = remat2[differentiated=False "
      "jaxpr={ lambda ; e:f32[3] g:f32[3]. let h:f32[3] = sin e; i:f32[3] = cos g in (h, i) } "
      "policy=None prevent_cse=True] a b in (c,) }");
  Jaxpr pruned = dce(*f);
  REQUIRE(pruned.eqns.size() == 1);
  const Eqn& call = pruned.eqns[0];
  CHECK(call.outputs.size() == 1);
  CHECK(call.inputs.size() == 1);  // b only fed the dropped cos
  CHECK(to_string(*call.params.get_jaxpr("jaxpr")) ==
        "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }");

  VjpResult r = vjp_jaxpr(*f);
  verify(r.bwd);
  // b's cotangent is zero: the backward remat2 computes only a's (b's zeros are made outside).
  const Eqn* bwd_call = nullptr;
  for (const Eqn& e : r.bwd.eqns)
    if (e.prim->name == "remat2") bwd_call = &e;
  REQUIRE(bwd_call);
  CHECK(bwd_call->outputs.size() == 1);
  CHECK(bwd_call->outputs[0].aval().str_short() == "f32[3]");
}
