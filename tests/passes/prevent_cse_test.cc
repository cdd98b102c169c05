// prevent_cse: when the backward program's recomputation is expanded for execution, its inputs
// pass through an optimization_barrier, so cse cannot merge it back into the forward program;
// with prevent_cse=False it can.
#include <catch2/catch.hpp>

#include "ir/parse/parser.h"
#include "ir/rules/verify.h"
#include "passes/cse.h"
#include "passes/inline.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"

using namespace cjax;

namespace {

// f(x) = sin(sin(x)) under checkpoint, and its gradient as one program: the forward program,
// then the backward program fed the residuals and a cotangent of one.
Jaxpr grad_program(bool prevent_cse) {
  Jaxpr f = *parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = sin b in (c,) }");
  VjpResult r = vjp_jaxpr(checkpoint_jaxpr(f, policies::nothing_saveable(), prevent_cse));
  JaxprBuilder b;
  std::vector<Atom> fwd = inline_jaxpr(b, r.fwd, {}, std::vector<Atom>{f.invars[0]});
  std::vector<Atom> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(Atom(Literal::of(1.0, DType::f32)));
  // A broadcast cotangent: the bwd program takes f32[3].
  Var ct = b.emit1("broadcast_in_dim", {bwd_in.back()},
                   {{"shape", ParamValue::ints({3})},
                    {"broadcast_dimensions", ParamValue::ints({})},
                    {"sharding", NoneParam{}}});
  bwd_in.back() = ct;
  std::vector<Atom> grads = inline_jaxpr(b, r.bwd, {}, bwd_in);
  return b.build(f.invars, grads);
}

size_t count(const Jaxpr& j, std::string_view prim) {
  size_t n = 0;
  for (const Eqn& e : j.eqns) n += e.prim->name == prim;
  return n;
}

}  // namespace

TEST_CASE("prevent_cse keeps the recomputation apart from the forward pass") {
  Jaxpr guarded = cse(expand_remat(grad_program(true)));
  verify(guarded);
  CHECK(count(guarded, "optimization_barrier") == 1);
  // forward: sin, sin; backward recomputation behind the barrier: sin (its cos are new work)
  CHECK(count(guarded, "sin") == 3);

  Jaxpr merged = cse(expand_remat(grad_program(false)));
  verify(merged);
  CHECK(count(merged, "optimization_barrier") == 0);
  CHECK(count(merged, "sin") == 2);  // the recomputed sin is the forward one again
}

TEST_CASE("expanding remat keeps the gradient") {
  for (bool prevent : {true, false}) {
    Jaxpr g = expand_remat(grad_program(prevent));
    std::vector<runtime::Buffer> args{runtime::Buffer::full(ShapedArray(DType::f32, {3}), 0.5)};
    double got = runtime::eval_jaxpr(g, args)[0].element(1);
    CHECK(got == Approx(std::cos(std::sin(0.5)) * std::cos(0.5)).epsilon(1e-6));
  }
}
