// jit eqns differentiate like JAX's pjit: named jits on both sides, forwarded input residuals,
// and the same numbers as the inlined program.
#include <catch2/catch.hpp>

#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/inline.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"

using namespace cjax;

namespace {

// wild-jaxprs/10: func12 with an inner jit named `inner`.
const char* kProgram = R"({ lambda ; a:f32[]. let
    b:f32[] = sub a 2.0:f32[]
    c:f32[1] = jit[
      name=inner
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[1] = broadcast_in_dim 1.0:f32[]
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
          f:f32[1] = mul e d
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
          c:f32[1] = add g f
        in (c,) }
    ] a b
    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    i:f32[1] = add h c
    j:f32[] = sin a
    k:f32[1] = mul i j
  in (k,) })";

std::vector<double> gradient(const Jaxpr& f, double x) {
  VjpResult r = vjp_jaxpr(f);
  verify(r.fwd);
  verify(r.bwd);
  std::vector<runtime::Buffer> args{runtime::Buffer::full(ShapedArray(DType::f32, {}), x)};
  std::vector<runtime::Buffer> fwd = runtime::eval_jaxpr(r.fwd, args);
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(runtime::Buffer::full(ShapedArray(DType::f32, {1}), 1.0));
  return runtime::eval_jaxpr(r.bwd, bwd_in)[0].to_doubles();
}

}  // namespace

TEST_CASE("a jit call differentiates to named jits and the inlined program's gradient") {
  Jaxpr f = *parse_jaxpr(kProgram);
  VjpResult r = vjp_jaxpr(f);
  std::string fwd = to_string(r.fwd), bwd = to_string(r.bwd);
  CHECK(fwd.find("jit[\n      name=inner") != std::string::npos);
  CHECK(bwd.find("name=inner") != std::string::npos);
  for (double x : {0.3, 1.7, -2.0}) {
    std::vector<double> with_jit = gradient(f, x), inlined = gradient(inline_calls(f), x);
    REQUIRE(with_jit.size() == 1);
    CHECK(with_jit[0] == Approx(inlined[0]).epsilon(1e-6));
    // d/dx[(x + (x - 2 + x)) sin x] = 3 sin x + (3x - 2) cos x
    CHECK(with_jit[0] == Approx(3 * std::sin(x) + (3 * x - 2) * std::cos(x)).epsilon(1e-5));
  }
}

TEST_CASE("residuals computed inside a jit are reported as its outputs") {
  Jaxpr f = *parse_jaxpr(
      "{ lambda ; a:f32[3]. let b:f32[3] = jit[name=inner jaxpr={ lambda ; c:f32[3]. let "
      "d:f32[3] = sin c; e:f32[3] = mul d d in (e,) }] a; f:f32[3] = sin b in (f,) }");
  VjpResult r = vjp_jaxpr(f);
  std::vector<std::string> names{"x"};
  std::string report = format_saved_residuals(saved_residuals(r.fwd, r.num_residuals, names));
  CHECK(report.find("f32[3] output of jitted function 'inner' from unknown\n") !=
        std::string::npos);
}
