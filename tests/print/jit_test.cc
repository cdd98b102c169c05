// jit name re-use, shared `let` jaxprs and custom-call params (corpus 10, 21-27 and the
// tests/pjit_test.py goldens of JAX HEAD).
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "ir/print/printer.h"
#include "tests/print/builder.h"
#include "tests/print/golden.h"

using namespace cjax;
using namespace cjax::test;

namespace {

Params jit(const std::string& name, JaxprRef j) {
  return {{"jaxpr", std::move(j)}, {"name", name}};
}

Params convert_f32() {
  return {{"new_dtype", DType::f32}, {"weak_type", false}};
}

}  // namespace

TEST_CASE("corpus 10: a jit's inner jaxpr re-uses the outer names") {
  JaxprBuilder inner;
  inner.in("x:f32[] y:f32[]")
      .eqn("broadcast_in_dim", "d:f32[1]", "1.0:f32[]")
      .eqn("convert_element_type", "e:f32[]", "x", convert_f32())
      .eqn("mul", "f:f32[1]", "e d")
      .eqn("convert_element_type", "g:f32[]", "y", convert_f32())
      .eqn("add", "r:f32[1]", "g f")
      .out("r");
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("sub", "b:f32[]", "a 2.0:f32[]")
      .eqn("jit", "c:f32[1]", "a b", jit("inner", inner.build()))
      .eqn("convert_element_type", "h:f32[]", "a", convert_f32())
      .eqn("add", "i:f32[1]", "h c")
      .out("i");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[]. let
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
  in (i,) })J",
               "10_docs_jit_inner_closure.jaxpr");
}

TEST_CASE("corpus 21: a jaxpr used twice prints once as `let lambda`") {
  JaxprBuilder lam;
  lam.in("x:f32[1]").eqn("integer_pow", "y:f32[1]", "x", {{"y", 2}}).out("y");
  JaxprRef shared = lam.build();
  JaxprBuilder g;
  g.in("x:f32[1]")
      .eqn("jit", "e:f32[1]", "x", jit("<lambda>", shared))
      .eqn("jit", "f:f32[1]", "x", jit("<lambda>", shared))
      .eqn("add", "d:f32[1]", "e f")
      .out("d");
  JaxprBuilder b;
  b.in("c:f32[1]").eqn("jit", "d:f32[1]", "c", jit("<lambda>", g.build())).out("d");
  check_golden(to_string(b.jaxpr()),
               R"J(let lambda = { lambda ; a:f32[1]. let b:f32[1] = integer_pow[y=2] a in (b,) } in
{ lambda ; c:f32[1]. let
    d:f32[1] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[1]. let
          e:f32[1] = jit[name=<lambda> jaxpr=lambda] c
          f:f32[1] = jit[name=<lambda> jaxpr=lambda] c
          d:f32[1] = add e f
        in (d,) }
    ] c
  in (d,) })J",
               "21_pjit_test_shared_lambda.jaxpr");
}

TEST_CASE("corpus 22: nested shared jaxprs in breadth-first order") {
  JaxprBuilder inner_fn;
  inner_fn.in("x:f32[1]").eqn("add", "y:f32[1]", "x 1.0:f32[]").out("y");
  JaxprRef inner = inner_fn.build();
  JaxprBuilder outer_fn;
  outer_fn.in("x:f32[1]")
      .eqn("jit", "b:f32[1]", "x", jit("inner_fn", inner))
      .eqn("jit", "c:f32[1]", "x", jit("inner_fn", inner))
      .eqn("add", "d:f32[1]", "b c")
      .out("d");
  JaxprRef outer = outer_fn.build();
  JaxprBuilder b;
  b.in("g:f32[1]")
      .eqn("jit", "h:f32[1]", "g", jit("outer_fn", outer))
      .eqn("jit", "i:f32[1]", "g", jit("outer_fn", outer))
      .eqn("add", "j:f32[1]", "h i")
      .out("j");
  check_golden(to_string(b.jaxpr()), R"J(let outer_fn = { lambda ; a:f32[1]. let
    b:f32[1] = jit[name=inner_fn jaxpr=inner_fn] a
    c:f32[1] = jit[name=inner_fn jaxpr=inner_fn] a
    d:f32[1] = add b c
  in (d,) } in
let inner_fn = { lambda ; e:f32[1]. let f:f32[1] = add e 1.0:f32[] in (f,) } in
{ lambda ; g:f32[1]. let
    h:f32[1] = jit[name=outer_fn jaxpr=outer_fn] g
    i:f32[1] = jit[name=outer_fn jaxpr=outer_fn] g
    j:f32[1] = add h i
  in (j,) })J",
               "22_pjit_test_nested_shared.jaxpr");
}

TEST_CASE("corpus 23: shared names are de-duplicated and skipped as var names") {
  JaxprBuilder f1, f2;
  f1.in("x:f32[1]").out("x");
  f2.in("x:f32[2]").out("x");
  JaxprRef fa = f1.build(), fb = f2.build();
  JaxprBuilder g;
  g.in("x:f32[1] y:f32[2]")
      .eqn("jit", "g:f32[1]", "x", jit("f", fa))
      .eqn("jit", "h:f32[1]", "x", jit("f", fa))
      .eqn("mul", "i:f32[1]", "g h")
      .eqn("jit", "j:f32[2]", "y", jit("f", fb))
      .eqn("jit", "k:f32[2]", "y", jit("f", fb))
      .eqn("mul", "l:f32[2]", "j k")
      .eqn("add", "e:f32[2]", "i l")
      .out("e");
  JaxprBuilder b;
  b.in("c:f32[1] d:f32[2]").eqn("jit", "e:f32[2]", "c d", jit("g", g.build())).out("e");
  check_golden(to_string(b.jaxpr()), R"J(let f = { lambda ; a:f32[1]. let  in (a,) } in
let f1 = { lambda ; b:f32[2]. let  in (b,) } in
{ lambda ; c:f32[1] d:f32[2]. let
    e:f32[2] = jit[
      name=g
      jaxpr={ lambda ; c:f32[1] d:f32[2]. let
          g:f32[1] = jit[name=f jaxpr=f] c
          h:f32[1] = jit[name=f jaxpr=f] c
          i:f32[1] = mul g h
          j:f32[2] = jit[name=f jaxpr=f1] d
          k:f32[2] = jit[name=f jaxpr=f1] d
          l:f32[2] = mul j k
          e:f32[2] = add i l
        in (e,) }
    ] c d
  in (e,) })J",
               "23_pjit_test_name_clash.jaxpr");
}

TEST_CASE("corpus 24: a literal result of a jit") {
  JaxprBuilder inner;
  inner.in("x:f32[1]").out("2:i32[] x");
  JaxprBuilder b;
  b.in("a:f32[1]").eqn("jit", "b:i32[] c:f32[1]", "a", jit("<lambda>", inner.build())).out("b c");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[1]. let
    b:i32[] c:f32[1] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[1]. let  in (2:i32[], a) }
    ] a
  in (b, c) })J",
               "24_pjit_test_literal_outvar.jaxpr");
}

TEST_CASE("pjit_test: an argument passed twice is re-used once") {
  JaxprBuilder inner;
  inner.in("x:f32[1] y:f32[1]").out("x");
  JaxprBuilder b;
  b.in("a:f32[1]")
      .eqn("jit", "b:f32[1]", "a a", jit("<lambda>", inner.build()))
      .eqn("add", "d:f32[1]", "a b")
      .out("d");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[1]. let
    b:f32[1] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[1] c:f32[1]. let  in (a,) }
    ] a a
    d:f32[1] = add a b
  in (d,) })J");
}

TEST_CASE("pjit_test: a literal argument takes no name") {
  JaxprBuilder inner;
  inner.in("x:f32[1] y:f32[]").eqn("mul", "z:f32[1]", "x y").out("z");
  JaxprBuilder b;
  b.in("a:f32[1]").eqn("jit", "b:f32[1]", "a 1.0:f32[]", jit("<lambda>", inner.build())).out("b");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[1]. let
    b:f32[1] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[1] c:f32[]. let b:f32[1] = mul a c in (b,) }
    ] a 1.0:f32[]
  in (b,) })J");
}

TEST_CASE("pjit_test: a shared jaxpr named f makes the counter skip f") {
  JaxprBuilder f;
  f.in("x:f32[1] y:f32[1]").eqn("mul", "z:f32[1]", "y x").out("z");
  JaxprRef fj = f.build();
  JaxprBuilder g;
  g.in("x:f32[1] y:f32[1]")
      .eqn("jit", "h:f32[1]", "y x", jit("f", fj))
      .eqn("jit", "i:f32[1]", "y y", jit("f", fj))
      .eqn("add", "r:f32[1]", "h i")
      .out("r");
  JaxprBuilder b;
  b.in("d:f32[1] e:f32[1]").eqn("jit", "g:f32[1]", "d e", jit("g", g.build())).out("g");
  check_golden(to_string(b.jaxpr()),
               R"J(let f = { lambda ; a:f32[1] b:f32[1]. let c:f32[1] = mul b a in (c,) } in
{ lambda ; d:f32[1] e:f32[1]. let
    g:f32[1] = jit[
      name=g
      jaxpr={ lambda ; d:f32[1] e:f32[1]. let
          h:f32[1] = jit[name=f jaxpr=f] e d
          i:f32[1] = jit[name=f jaxpr=f] e e
          g:f32[1] = add h i
        in (g,) }
    ] d e
  in (g,) })J");
}

TEST_CASE("pjit_test: a sub-jaxpr with more than 10 eqns prints out of line") {
  JaxprBuilder small;
  small.in("y:i32[2]").eqn("add", "z:i32[2]", "y 1:i32[]").out("z");
  JaxprBuilder large;
  large.in("v0:i32[2]");
  for (int i = 0; i < 11; ++i)
    large.eqn("add", fmt::format("v{}:i32[2]", i + 1), fmt::format("v{} 1:i32[]", i));
  large.out("v11");
  JaxprBuilder b;
  b.in("m:i32[2]")
      .eqn("jit", "n:i32[2]", "m", jit("inner_jit_small", small.build()))
      .eqn("jit", "o:i32[2]", "n", jit("inner_jit_large", large.build()))
      .out("o");
  check_golden(to_string(b.jaxpr()), R"J(let inner_jit_large = { lambda ; a:i32[2]. let
    b:i32[2] = add a 1:i32[]
    c:i32[2] = add b 1:i32[]
    d:i32[2] = add c 1:i32[]
    e:i32[2] = add d 1:i32[]
    f:i32[2] = add e 1:i32[]
    g:i32[2] = add f 1:i32[]
    h:i32[2] = add g 1:i32[]
    i:i32[2] = add h 1:i32[]
    j:i32[2] = add i 1:i32[]
    k:i32[2] = add j 1:i32[]
    l:i32[2] = add k 1:i32[]
  in (l,) } in
{ lambda ; m:i32[2]. let
    n:i32[2] = jit[
      name=inner_jit_small
      jaxpr={ lambda ; m:i32[2]. let n:i32[2] = add m 1:i32[] in (n,) }
    ] m
    o:i32[2] = jit[name=inner_jit_large jaxpr=inner_jit_large] n
  in (o,) })J");
  // The top-level jaxpr itself is never hoisted, however long.
  CHECK(to_string(large.jaxpr()).rfind("{ lambda ; a:i32[2]. let", 0) == 0);
}

TEST_CASE("a large remat2 body prints as `let jaxpr` (no name param)") {
  JaxprBuilder body;
  body.in("v0:f32[]");
  for (int i = 0; i < 11; ++i)
    body.eqn("sin", fmt::format("v{}:f32[]", i + 1), fmt::format("v{}", i));
  body.out("v11");
  JaxprBuilder b;
  b.in("x:f32[]")
      .eqn("remat2", "y:f32[]", "x",
           {{"jaxpr", body.build()},
            {"prevent_cse", true},
            {"differentiated", false},
            {"policy", NoneParam{}}})
      .out("y");
  // Shared jaxprs are printed (and named) first; "jaxpr" is no single-letter name to skip.
  check_golden(to_string(b.jaxpr()), R"J(let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
  in (l,) } in
{ lambda ; m:f32[]. let
    n:f32[] = remat2[
      differentiated=False
      jaxpr=jaxpr
      policy=None
      prevent_cse=True
    ] m
  in (n,) })J");
}

TEST_CASE("remat2 does not re-use outer names") {
  JaxprBuilder body;
  body.in("x:f32[]").eqn("sin", "y:f32[]", "x").out("y");
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("remat2", "b:f32[]", "a",
           {{"jaxpr", body.build()},
            {"prevent_cse", true},
            {"differentiated", false},
            {"policy", NoneParam{}}})
      .out("b");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) })J");
}

TEST_CASE("an unused jit result is `_`, and so is the inner result it names") {
  JaxprBuilder inner;
  inner.in("x:f32[]").eqn("sin", "y:f32[]", "x").out("y");
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("jit", "unused:f32[]", "a", jit("f", inner.build()))
      .eqn("cos", "c:f32[]", "a")
      .out("c");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[]. let
    _:f32[] = jit[
      name=f
      jaxpr={ lambda ; a:f32[]. let _:f32[] = sin a in (_,) }
    ] a
    b:f32[] = cos a
  in (b,) })J");
}

TEST_CASE("corpus 25-27: custom_jvp_call, custom_vjp_call, custom_lin") {
  JaxprBuilder call;
  call.in("c:f32[1]").eqn("add", "d:f32[1]", "c 1.0:f32[]").out("d");
  JaxprRef cj = call.build();

  Primitive jvp_call;
  jvp_call.name = "custom_jvp_call";
  jvp_call.print_params = prim("custom_vjp_call").print_params;  // name= first
  JaxprBuilder b25;
  b25.in("a:f32[1]")
      .eqn(jvp_call, "b:f32[1]", "a",
           {{"call_jaxpr", cj}, {"jvp", "f_jvp"}, {"symbolic_zeros", false}, {"name", "f"}})
      .out("b");
  check_golden(to_string(b25.jaxpr()), R"J({ lambda ; a:f32[1]. let
    b:f32[1] = custom_jvp_call[
      name=f
      call_jaxpr={ lambda ; c:f32[1]. let d:f32[1] = add c 1.0:f32[] in (d,) }
      jvp=f_jvp
      symbolic_zeros=False
    ] a
  in (b,) })J",
               "25_custom_jvp_call.jaxpr");

  JaxprBuilder b26;
  b26.in("a:f32[1]")
      .eqn("custom_vjp_call", "b:f32[1]", "a",
           {{"call_jaxpr", cj},
            {"fwd", OpaqueParam{"f_fwd"}},
            {"bwd", OpaqueParam{"f_bwd"}},
            {"symbolic_zeros", false},
            {"name", "f"}})
      .out("b");
  check_golden(to_string(b26.jaxpr()), R"J({ lambda ; a:f32[1]. let
    b:f32[1] = custom_vjp_call[
      name=f
      bwd=f_bwd
      call_jaxpr={ lambda ; c:f32[1]. let d:f32[1] = add c 1.0:f32[] in (d,) }
      fwd=f_fwd
      symbolic_zeros=False
    ] a
  in (b,) })J",
               "26_custom_vjp_call.jaxpr");

  JaxprBuilder b27;
  b27.in("a:f32[1]")
      .eqn("custom_lin", "b:f32[1]", "a",
           {{"num_res", 0},
            {"bwd", OpaqueParam{"f_bwd"}},
            {"in_zeros", ParamList{{false}}},
            {"symbolic_zeros", false}})
      .out("b");
  check_golden(to_string(b27.jaxpr()), R"J({ lambda ; a:f32[1]. let
    b:f32[1] = custom_lin[
      bwd=f_bwd
      in_zeros=[False]
      num_res=0
      symbolic_zeros=False
    ] a
  in (b,) })J",
               "27_custom_lin.jaxpr");
}
