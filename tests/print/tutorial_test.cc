// The gradient-checkpointing tutorial's print_fwd_bwd(f) jaxprs (jax-outputs.md section 3.1):
// source D (2026 docs build, preferred_element_type=float32) and source A (2022, no
// preferred_element_type, so dot_general's params stay on one line).
#include <catch2/catch.hpp>

#include "tests/golden/golden.h"

#include "ir/print/printer.h"
#include "tests/print/builder.h"
#include "tests/print/golden.h"

using namespace cjax;
using namespace cjax::test;

namespace {

Params dot(ParamValue dn, bool preferred_f32) {
  Params p = dot_params(std::move(dn));
  if (!preferred_f32) p.set("preferred_element_type", NoneParam{});
  return p;
}

Jaxpr forward(bool preferred_f32, const std::string& outs) {
  JaxprBuilder b;
  b.in("a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4]")
      .eqn("dot_general", "e:f32[5]", "a d", dot(dims({1}, {0}), preferred_f32))
      .eqn("sin", "f:f32[5]", "e")
      .eqn("cos", "g:f32[5]", "e")
      .eqn("dot_general", "h:f32[6]", "b f", dot(dims({1}, {0}), preferred_f32))
      .eqn("sin", "i:f32[6]", "h")
      .eqn("cos", "j:f32[6]", "h")
      .eqn("dot_general", "k:f32[7]", "c i", dot(dims({1}, {0}), preferred_f32))
      .eqn("sin", "l:f32[7]", "k")
      .eqn("cos", "m:f32[7]", "k")
      .out(outs);
  return b.jaxpr();
}

}  // namespace

TEST_CASE("tutorial source D: forward jaxpr") {
  check_golden(to_string(forward(true, "l a b c d g f j i m")),
               golden::text("tutorial_f_fwd.jaxpr"));
}

TEST_CASE("tutorial source D: backward jaxpr (the binder list wraps past column 80)") {
  JaxprBuilder b;
  b.in("a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4] e:f32[5] f:f32[5] g:f32[6] h:f32[6] i:f32[7] "
       "j:f32[7]")
      .eqn("mul", "k:f32[7]", "j i")
      .eqn("dot_general", "l:f32[6]", "k c", dot(dims({0}, {0}), true))
      .eqn("dot_general", "m:f32[7,6]", "k h", dot(dims({}, {}), true))
      .eqn("mul", "n:f32[6]", "l g")
      .eqn("dot_general", "o:f32[5]", "n b", dot(dims({0}, {0}), true))
      .eqn("dot_general", "p:f32[6,5]", "n f", dot(dims({}, {}), true))
      .eqn("mul", "q:f32[5]", "o e")
      .eqn("dot_general", "r:f32[4]", "q a", dot(dims({0}, {0}), true))
      .eqn("dot_general", "s:f32[5,4]", "q d", dot(dims({}, {}), true))
      .out("s p m r");
  check_golden(to_string(b.jaxpr()), golden::text("tutorial_f_bwd.jaxpr"));
}

TEST_CASE("tutorial source A: dot_general params fit on one line") {
  check_golden(to_string(forward(false, "l m i c j f b g d a")),
               R"J({ lambda ; a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4]. let
    e:f32[5] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a d
    f:f32[5] = sin e
    g:f32[5] = cos e
    h:f32[6] = dot_general[dimension_numbers=(([1], [0]), ([], []))] b f
    i:f32[6] = sin h
    j:f32[6] = cos h
    k:f32[7] = dot_general[dimension_numbers=(([1], [0]), ([], []))] c i
    l:f32[7] = sin k
    m:f32[7] = cos k
  in (l, m, i, c, j, f, b, g, d, a) })J");

  JaxprBuilder b;
  b.in("a:f32[7] b:f32[6] c:f32[7,6] d:f32[6] e:f32[5] f:f32[6,5] g:f32[5] h:f32[4] i:f32[5,4] "
       "j:f32[7]")
      .eqn("mul", "k:f32[7]", "j a")
      .eqn("dot_general", "l:f32[6]", "k c", dot(dims({0}, {0}), false))
      .eqn("dot_general", "m:f32[7,6]", "k b", dot(dims({}, {}), false))
      .eqn("mul", "n:f32[6]", "l d")
      .eqn("dot_general", "o:f32[5]", "n f", dot(dims({0}, {0}), false))
      .eqn("dot_general", "p:f32[6,5]", "n e", dot(dims({}, {}), false))
      .eqn("mul", "q:f32[5]", "o g")
      .eqn("dot_general", "r:f32[4]", "q i", dot(dims({0}, {0}), false))
      .eqn("dot_general", "s:f32[5,4]", "q h", dot(dims({}, {}), false))
      .out("s p m r");
  check_golden(
      to_string(b.jaxpr()),
      R"J({ lambda ; a:f32[7] b:f32[6] c:f32[7,6] d:f32[6] e:f32[5] f:f32[6,5] g:f32[5] h:f32[4]
    i:f32[5,4] j:f32[7]. let
    k:f32[7] = mul j a
    l:f32[6] = dot_general[dimension_numbers=(([0], [0]), ([], []))] k c
    m:f32[7,6] = dot_general[dimension_numbers=(([], []), ([], []))] k b
    n:f32[6] = mul l d
    o:f32[5] = dot_general[dimension_numbers=(([0], [0]), ([], []))] n f
    p:f32[6,5] = dot_general[dimension_numbers=(([], []), ([], []))] n e
    q:f32[5] = mul o g
    r:f32[4] = dot_general[dimension_numbers=(([0], [0]), ([], []))] q i
    s:f32[5,4] = dot_general[dimension_numbers=(([], []), ([], []))] q h
  in (s, p, m, r) })J");
}
