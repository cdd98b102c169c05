// Jaxprs of the wild corpus (current format, files 01-20 without jit) rebuilt by hand; the
// printer must reproduce JAX's text byte for byte.
#include <catch2/catch.hpp>

#include "ir/print/printer.h"
#include "tests/print/builder.h"
#include "tests/print/golden.h"

using namespace cjax;
using namespace cjax::test;

namespace {

Params reduce_sum(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::ints(axes)}, {"out_sharding", NoneParam{}}};
}

Params convert(DType t, bool weak = false) {
  return {{"new_dtype", t}, {"weak_type", weak}};
}

Params bcast_dims(std::vector<int64_t> d) {
  return {{"broadcast_dimensions", ParamValue::ints(d)}};
}

}  // namespace

TEST_CASE("corpus 01: forward with reduce_sum") {
  JaxprBuilder b;
  b.in("a:f32[3]")
      .eqn("add", "b:f32[3]", "a 1.0:f32[]")
      .eqn("mul", "c:f32[3]", "b b")
      .eqn("reduce_sum", "d:f32[]", "c", reduce_sum({0}))
      .out("d");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[3]. let
    b:f32[3] = add a 1.0:f32[]
    c:f32[3] = mul b b
    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
  in (d,) })J",
               "01_jaxpathways_forward_reduce_sum.jaxpr");
}

TEST_CASE("corpus 02: an unused top-level output prints as _") {
  JaxprBuilder b;
  b.in("a:f32[3]")
      .eqn("add", "b:f32[3]", "a 1.0:f32[]")
      .eqn("mul", "c:f32[3]", "b b")
      .eqn("reduce_sum", "unused:f32[]", "c", reduce_sum({0}))  // a plain var nothing reads
      .eqn("broadcast_in_dim", "d:f32[3]", "1.0:f32[]")
      .eqn("mul", "e:f32[3]", "b d")
      .eqn("mul", "f:f32[3]", "d b")
      .eqn("add_any", "g:f32[3]", "e f")
      .out("g");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[3]. let
    b:f32[3] = add a 1.0:f32[]
    c:f32[3] = mul b b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul b d
    f:f32[3] = mul d b
    g:f32[3] = add_any e f
  in (g,) })J",
               "02_jaxpathways_grad_add_any.jaxpr");
}

TEST_CASE("corpus 03: constvars") {
  JaxprBuilder b;
  b.constvars("a:f32[3]")
      .in("b:f32[3]")
      .eqn("add", "c:f32[3]", "b a")
      .eqn("reduce_sum", "d:f32[]", "c", reduce_sum({0}))
      .out("d");
  check_golden(to_string(b.jaxpr()), R"J({ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = add b a
    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
  in (d,) })J",
               "03_jaxpathways_constvar_closure.jaxpr");
}

TEST_CASE("corpus 04: scan with the 0.9 params") {
  JaxprBuilder body;
  body.in("c:f32[]")
      .eqn("mul", "d:f32[]", "0.5:f32[] c")
      .eqn("add", "e:f32[]", "d 1.0:f32[]")
      .out("e e");
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("scan", "b:f32[] ys:f32[4]", "a",
           {{"_split_transpose", false},
            {"jaxpr", body.build()},
            {"length", 4},
            {"linear", ParamValue::bools({false})},
            {"num_carry", 1},
            {"num_consts", 0},
            {"reverse", false},
            {"unroll", 1}})
      .out("b");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[]. let
    b:f32[] _:f32[4] = scan[
      _split_transpose=False
      jaxpr={ lambda ; c:f32[]. let
          d:f32[] = mul 0.5:f32[] c
          e:f32[] = add d 1.0:f32[]
        in (e, e) }
      length=4
      linear=(False,)
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) })J",
               "04_jaxpathways_scan.jaxpr");
}

TEST_CASE("corpus 05: cond with multi-line branches") {
  JaxprBuilder t, f;
  t.in("g:f32[3]")
      .eqn("reduce_sum", "h:f32[]", "g", reduce_sum({0}))
      .eqn("neg", "i:f32[]", "h")
      .out("i");
  f.in("j:f32[3]").eqn("reduce_sum", "k:f32[]", "j", reduce_sum({0})).out("k");
  JaxprBuilder b;
  b.in("a:f32[3]")
      .eqn("slice", "b:f32[1]", "a",
           {{"start_indices", ParamValue::ints({0})},
            {"limit_indices", ParamValue::ints({1})},
            {"strides", NoneParam{}}})
      .eqn("squeeze", "c:f32[]", "b", {{"dimensions", ParamValue::ints({0})}})
      .eqn("gt", "d:bool[]", "c 0.0:f32[]")
      .eqn("convert_element_type", "e:i32[]", "d", convert(DType::i32))
      .eqn("cond", "f:f32[]", "e a", {{"branches", ParamTuple{{t.build(), f.build()}}}})
      .out("f");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
    d:bool[] = gt c 0.0:f32[]
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d
    f:f32[] = cond[
      branches=(
        { lambda ; g:f32[3]. let
            h:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
            i:f32[] = neg h
          in (i,) }
        { lambda ; j:f32[3]. let
            k:f32[] = reduce_sum[axes=(0,) out_sharding=None] j
          in (k,) }
      )
    ] e a
  in (f,) })J",
               "05_jaxpathways_cond_slice_squeeze.jaxpr");
}

TEST_CASE("corpus 06: switch with three one-line branches") {
  JaxprBuilder b0, b1, b2;
  b0.in("f:f32[]").eqn("add", "g:f32[]", "f 1.0:f32[]").out("g");
  b1.in("h:f32[]").eqn("sub", "i:f32[]", "h 2.0:f32[]").out("i");
  b2.in("j:f32[]").eqn("add", "k:f32[]", "j 3.0:f32[]").out("k");
  JaxprBuilder b;
  b.in("a:i32[] b:f32[]")
      .eqn("convert_element_type", "c:i32[]", "a", convert(DType::i32))
      .eqn("clamp", "d:i32[]", "0:i32[] c 2:i32[]")
      .eqn("cond", "e:f32[]", "d b",
           {{"branches", ParamTuple{{b0.build(), b1.build(), b2.build()}}}})
      .out("e");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0:i32[] c 2:i32[]
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = add f 1.0:f32[] in (g,) }
        { lambda ; h:f32[]. let i:f32[] = sub h 2.0:f32[] in (i,) }
        { lambda ; j:f32[]. let k:f32[] = add j 3.0:f32[] in (k,) }
      )
    ] d b
  in (e,) })J",
               "06_docs_switch_clamp_cond3.jaxpr");
}

TEST_CASE("corpus 07: constvar operand and an empty branch body") {
  JaxprBuilder t, f;
  t.in("h:i32[1] i:f32[1] j:f32[]")
      .eqn("convert_element_type", "k:f32[1]", "h", convert(DType::f32, true))
      .eqn("add", "l:f32[1]", "k j")
      .out("l");
  f.in("m:i32[1] n:f32[1] o:f32[]").out("n");
  JaxprBuilder b;
  b.constvars("a:i32[1]")
      .in("b:f32[] c:f32[1] d:f32[]")
      .eqn("ge", "e:bool[]", "b 0.0:f32[]")
      .eqn("convert_element_type", "f:i32[]", "e", convert(DType::i32))
      .eqn("cond", "g:f32[1]", "f a c d", {{"branches", ParamTuple{{t.build(), f.build()}}}})
      .out("g");
  check_golden(to_string(b.jaxpr()), R"J({ lambda a:i32[1]; b:f32[] c:f32[1] d:f32[]. let
    e:bool[] = ge b 0.0:f32[]
    f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
    g:f32[1] = cond[
      branches=(
        { lambda ; h:i32[1] i:f32[1] j:f32[]. let
            k:f32[1] = convert_element_type[new_dtype=float32 weak_type=True] h
            l:f32[1] = add k j
          in (l,) }
        { lambda ; m:i32[1] n:f32[1] o:f32[]. let  in (n,) }
      )
    ] f a c d
  in (g,) })J",
               "07_docs_cond_hoisted_const.jaxpr");
}

TEST_CASE("corpus 08: while with two dropped outputs") {
  JaxprBuilder body, cond;
  body.in("f:f32[16] g:f32[16] h:i32[] i:i32[] j:f32[16]")
      .eqn("add", "k:i32[]", "h 1:i32[]")
      .eqn("mul", "l:f32[16]", "f 3.0:f32[]")
      .eqn("add", "m:f32[16]", "j l")
      .eqn("add", "n:f32[16]", "m g")
      .out("k i n");
  cond.in("o:i32[] p:i32[] q:f32[16]").eqn("lt", "r:bool[]", "o p").out("r");
  JaxprBuilder b;
  b.in("a:f32[16] b:i32[]")
      .eqn("broadcast_in_dim", "c:f32[16]", "1.0:f32[]")
      .eqn("add", "d:f32[16]", "a c")
      .eqn("while", "_:i32[] _:i32[] e:f32[16]", "c a 0:i32[] b d",
           {{"cond_nconsts", 0},
            {"cond_jaxpr", cond.build()},
            {"body_nconsts", 2},
            {"body_jaxpr", body.build()}})
      .out("e");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[16] b:i32[]. let
    c:f32[16] = broadcast_in_dim 1.0:f32[]
    d:f32[16] = add a c
    _:i32[] _:i32[] e:f32[16] = while[
      body_jaxpr={ lambda ; f:f32[16] g:f32[16] h:i32[] i:i32[] j:f32[16]. let
          k:i32[] = add h 1:i32[]
          l:f32[16] = mul f 3.0:f32[]
          m:f32[16] = add j l
          n:f32[16] = add m g
        in (k, i, n) }
      body_nconsts=2
      cond_jaxpr={ lambda ; o:i32[] p:i32[] q:f32[16]. let
          r:bool[] = lt o p
        in (r,) }
      cond_nconsts=0
    ] c a 0:i32[] b d
  in (e,) })J",
               "08_docs_while_fori.jaxpr");
}

TEST_CASE("corpus 09: scan without linear") {
  JaxprBuilder body;
  body.in("f:f32[] g:f32[] h:f32[] i:f32[]")
      .eqn("mul", "j:f32[]", "h i")
      .eqn("convert_element_type", "k:f32[]", "g", convert(DType::f32))
      .eqn("add", "l:f32[]", "k j")
      .eqn("convert_element_type", "m:f32[]", "f", convert(DType::f32))
      .eqn("add", "n:f32[]", "l m")
      .out("n g");
  JaxprBuilder b;
  b.in("a:f32[16] b:f32[]")
      .eqn("broadcast_in_dim", "c:f32[16]", "1.0:f32[]")
      .eqn("scan", "d:f32[] e:f32[16]", "b 0.0:f32[] a c",
           {{"reverse", false},
            {"length", 16},
            {"jaxpr", body.build()},
            {"num_consts", 1},
            {"num_carry", 1},
            {"unroll", 1}})
      .out("d e");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[16] b:f32[]. let
    c:f32[16] = broadcast_in_dim 1.0:f32[]
    d:f32[] e:f32[16] = scan[
      jaxpr={ lambda ; f:f32[] g:f32[] h:f32[] i:f32[]. let
          j:f32[] = mul h i
          k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] g
          l:f32[] = add k j
          m:f32[] = convert_element_type[new_dtype=float32 weak_type=False] f
          n:f32[] = add l m
        in (n, g) }
      length=16
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] b 0.0:f32[] a c
  in (d, e) })J",
               "09_docs_scan_no_linear.jaxpr");
}

TEST_CASE("corpus 11: dot_general params break over lines, an input var is returned") {
  JaxprBuilder b;
  b.in("a:f32[5,10] b:f32[5] c:f32[10]")
      .eqn("dot_general", "d:f32[5]", "a c", dot_params(dims({1}, {0})))
      .eqn("add", "e:f32[5]", "d b")
      .eqn("broadcast_in_dim", "f:f32[5]", "1.0:f32[]")
      .eqn("add", "g:f32[5]", "e f")
      .out("g c");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[5,10] b:f32[5] c:f32[10]. let
    d:f32[5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a c
    e:f32[5] = add d b
    f:f32[5] = broadcast_in_dim 1.0:f32[]
    g:f32[5] = add e f
  in (g, c) })J",
               "11_docs_interp_dot_general.jaxpr");
}

TEST_CASE("corpus 12 and 17: one-line jaxprs") {
  JaxprBuilder b;
  b.in("a:f32[5]").eqn("tanh", "b:f32[5]", "a").eqn("exp", "c:f32[5]", "b").out("c");
  check_golden(to_string(b.jaxpr()),
               "{ lambda ; a:f32[5]. let b:f32[5] = tanh a; c:f32[5] = exp b in (c,) }",
               "12_docs_oneliner_tanh_exp.jaxpr");
  JaxprBuilder c;
  c.in("a:f32[]").eqn("cos", "b:f32[]", "a").eqn("sin", "c:f32[]", "b").out("c");
  check_golden(to_string(c.jaxpr()),
               "{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = sin b in (c,) }",
               "17_api_docstring_oneliner.jaxpr");
}

TEST_CASE("corpus 13: a wrapped invar list and names past z") {
  const std::vector<std::string> in = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  const std::vector<std::string> out = {"k", "l", "m", "n", "o", "p", "q",  "r",  "s",  "t",
                                        "u", "v", "w", "x", "y", "z", "ba", "bb", "bc", "bd"};
  JaxprBuilder b;
  for (const auto& n : in) b.in(n + ":i32[]");
  std::string parts;
  for (size_t i = 0; i < in.size(); ++i) {
    b.eqn("convert_element_type", out[2 * i] + ":i32[]", in[i], convert(DType::i32));
    b.eqn("broadcast_in_dim", out[2 * i + 1] + ":i32[1]", out[2 * i]);
    parts += (i ? " " : "") + out[2 * i + 1];
  }
  b.eqn("concatenate", "be:i32[10]", parts, {{"dimension", 0}})
      .eqn("reduce_sum", "bf:i32[]", "be", reduce_sum({0}))
      .out("bf");
  check_golden(
      to_string(b.jaxpr()),
      R"J({ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] h:i32[] i:i32[]
    j:i32[]. let
    k:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    l:i32[1] = broadcast_in_dim k
    m:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    n:i32[1] = broadcast_in_dim m
    o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    p:i32[1] = broadcast_in_dim o
    q:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d
    r:i32[1] = broadcast_in_dim q
    s:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
    t:i32[1] = broadcast_in_dim s
    u:i32[] = convert_element_type[new_dtype=int32 weak_type=False] f
    v:i32[1] = broadcast_in_dim u
    w:i32[] = convert_element_type[new_dtype=int32 weak_type=False] g
    x:i32[1] = broadcast_in_dim w
    y:i32[] = convert_element_type[new_dtype=int32 weak_type=False] h
    z:i32[1] = broadcast_in_dim y
    ba:i32[] = convert_element_type[new_dtype=int32 weak_type=False] i
    bb:i32[1] = broadcast_in_dim ba
    bc:i32[] = convert_element_type[new_dtype=int32 weak_type=False] j
    bd:i32[1] = broadcast_in_dim bc
    be:i32[10] = concatenate[dimension=0] l n p r t v x z bb bd
    bf:i32[] = reduce_sum[axes=(0,) out_sharding=None] be
  in (bf,) })J",
      "13_docs_permissive_sum_bare_bcast.jaxpr");
}

TEST_CASE("corpus 14: slice params break over lines, float32 literal repr") {
  auto slice = [](std::vector<int64_t> start, std::vector<int64_t> limit) {
    return Params{{"start_indices", ParamValue::ints(start)},
                  {"limit_indices", ParamValue::ints(limit)},
                  {"strides", NoneParam{}}};
  };
  JaxprBuilder b;
  b.in("a:f32[2,32,4,128] b:f32[128] c:f32[32,64] d:f32[32,64]")
      .eqn("square", "e:f32[2,32,4,128]", "a")
      .eqn("reduce_sum", "f:f32[2,32,4]", "e", reduce_sum({3}))
      .eqn("broadcast_in_dim", "g:f32[2,32,4,1]", "f", bcast_dims({0, 1, 2}))
      .eqn("div", "h:f32[2,32,4,1]", "g 128.0:f32[]")
      .eqn("add", "i:f32[2,32,4,1]", "h 1e-6:f32[]")
      .eqn("rsqrt", "j:f32[2,32,4,1]", "i")
      .eqn("mul", "k:f32[2,32,4,128]", "a j")
      .eqn("broadcast_in_dim", "l:f32[1,1,1,128]", "b", bcast_dims({3}))
      .eqn("mul", "m:f32[2,32,4,128]", "k l")
      .eqn("slice", "n:f32[2,32,4,64]", "m", slice({0, 0, 0, 0}, {2, 32, 4, 64}))
      .eqn("slice", "o:f32[2,32,4,64]", "m", slice({0, 0, 0, 64}, {2, 32, 4, 128}))
      .eqn("broadcast_in_dim", "p:f32[1,32,1,64]", "c", bcast_dims({1, 3}))
      .eqn("broadcast_in_dim", "q:f32[1,32,1,64]", "d", bcast_dims({1, 3}))
      .eqn("mul", "r:f32[2,32,4,64]", "n p")
      .eqn("mul", "s:f32[2,32,4,64]", "o q")
      .eqn("sub", "t:f32[2,32,4,64]", "r s")
      .eqn("mul", "u:f32[2,32,4,64]", "o p")
      .eqn("mul", "v:f32[2,32,4,64]", "n q")
      .eqn("add", "w:f32[2,32,4,64]", "u v")
      .eqn("concatenate", "x:f32[2,32,4,128]", "t w", {{"dimension", 3}})
      .out("x");
  check_golden(to_string(b.jaxpr()),
               R"J({ lambda ; a:f32[2,32,4,128] b:f32[128] c:f32[32,64] d:f32[32,64]. let
    e:f32[2,32,4,128] = square a
    f:f32[2,32,4] = reduce_sum[axes=(3,) out_sharding=None] e
    g:f32[2,32,4,1] = broadcast_in_dim[broadcast_dimensions=(0, 1, 2)] f
    h:f32[2,32,4,1] = div g 128.0:f32[]
    i:f32[2,32,4,1] = add h 9.999999974752427e-07:f32[]
    j:f32[2,32,4,1] = rsqrt i
    k:f32[2,32,4,128] = mul a j
    l:f32[1,1,1,128] = broadcast_in_dim[broadcast_dimensions=(3,)] b
    m:f32[2,32,4,128] = mul k l
    n:f32[2,32,4,64] = slice[
      limit_indices=(2, 32, 4, 64)
      start_indices=(0, 0, 0, 0)
      strides=None
    ] m
    o:f32[2,32,4,64] = slice[
      limit_indices=(2, 32, 4, 128)
      start_indices=(0, 0, 0, 64)
      strides=None
    ] m
    p:f32[1,32,1,64] = broadcast_in_dim[broadcast_dimensions=(1, 3)] c
    q:f32[1,32,1,64] = broadcast_in_dim[broadcast_dimensions=(1, 3)] d
    r:f32[2,32,4,64] = mul n p
    s:f32[2,32,4,64] = mul o q
    t:f32[2,32,4,64] = sub r s
    u:f32[2,32,4,64] = mul o p
    v:f32[2,32,4,64] = mul n q
    w:f32[2,32,4,64] = add u v
    x:f32[2,32,4,128] = concatenate[dimension=3] t w
  in (x,) })J",
               "14_qk_norm_rope_jax011.jaxpr");
}

TEST_CASE("corpus 15: precision param, dropped reduce_sum, transpose") {
  Params dot = dot_params(dims({1}, {0}));
  dot.set("precision", OpaqueParam{"BF16_BF16_F32"});
  Params dot_t = dot_params(dims({0}, {0}));
  dot_t.set("precision", "BF16_BF16_F32");  // a plain string prints the same, bare
  JaxprBuilder b;
  b.in("a:f32[4,8] b:f32[8,2]")
      .eqn("dot_general", "c:f32[4,2]", "a b", dot)
      .eqn("reduce_sum", "_:f32[]", "c", reduce_sum({0, 1}))
      .eqn("broadcast_in_dim", "d:f32[4,2]", "1.0:f32[]")
      .eqn("dot_general", "e:f32[2,8]", "d a", dot_t)
      .eqn("transpose", "f:f32[8,2]", "e", {{"permutation", ParamValue::ints({1, 0})}})
      .out("f");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[4,8] b:f32[8,2]. let
    c:f32[4,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=BF16_BF16_F32
      preferred_element_type=float32
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,2] = broadcast_in_dim 1.0:f32[]
    e:f32[2,8] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      precision=BF16_BF16_F32
      preferred_element_type=float32
    ] d a
    f:f32[8,2] = transpose[permutation=(1, 0)] e
  in (f,) })J",
               "15_precision_grad_dot_transpose.jaxpr");
}

TEST_CASE("corpus 16: integer literal") {
  JaxprBuilder b;
  b.in("a:i32[] b:i32[]").eqn("mul", "c:i32[]", "2:i32[] a").eqn("add", "d:i32[]", "c b").out("d");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:i32[] b:i32[]. let
    c:i32[] = mul 2:i32[] a
    d:i32[] = add c b
  in (d,) })J",
               "16_aot_int_literal.jaxpr");
}

TEST_CASE("corpus 18: grad with an unused sin") {
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("cos", "b:f32[]", "a")
      .eqn("sin", "c:f32[]", "a")
      .eqn("sin", "unused:f32[]", "b")
      .eqn("cos", "d:f32[]", "b")
      .eqn("mul", "e:f32[]", "1.0:f32[] d")
      .eqn("neg", "f:f32[]", "e")
      .eqn("mul", "g:f32[]", "f c")
      .out("g");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[]. let
    b:f32[] = cos a
    c:f32[] = sin a
    _:f32[] = sin b
    d:f32[] = cos b
    e:f32[] = mul 1.0:f32[] d
    f:f32[] = neg e
    g:f32[] = mul f c
  in (g,) })J",
               "18_api_docstring_grad_dropvar.jaxpr");
}

TEST_CASE("corpus 19: cond whose branches take three operands") {
  JaxprBuilder t, f;
  t.in("g:f32[] h:f32[] i:f32[]").eqn("sub", "j:f32[]", "i g").out("j");
  f.in("k:f32[] l:f32[] m:f32[]").eqn("add", "n:f32[]", "l k").out("n");
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("ge", "b:bool[]", "a 0.0:f32[]")
      .eqn("add", "c:f32[]", "a 1.0:f32[]")
      .eqn("add", "d:f32[]", "a 2.0:f32[]")
      .eqn("convert_element_type", "e:i32[]", "b", convert(DType::i32))
      .eqn("cond", "f:f32[]", "e a c d", {{"branches", ParamTuple{{t.build(), f.build()}}}})
      .out("f");
  check_golden(to_string(b.jaxpr()), R"J({ lambda ; a:f32[]. let
    b:bool[] = ge a 0.0:f32[]
    c:f32[] = add a 1.0:f32[]
    d:f32[] = add a 2.0:f32[]
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    f:f32[] = cond[
      branches=(
        { lambda ; g:f32[] h:f32[] i:f32[]. let j:f32[] = sub i g in (j,) }
        { lambda ; k:f32[] l:f32[] m:f32[]. let n:f32[] = add l k in (n,) }
      )
    ] e a c d
  in (f,) })J",
               "19_api_test_cond_multi_operand.jaxpr");
}

TEST_CASE("corpus 20: empty body and an elided array literal") {
  JaxprBuilder b;
  b.in("a:f32[]").out("a [...]:f32[3]");
  check_golden(to_string(b.jaxpr()), "{ lambda ; a:f32[]. let  in (a, [...]:f32[3]) }",
               "20_api_test_nonscalar_const_elided.jaxpr");
  // tests/api_test.py test_const, default mode: a constvar and a scalar literal output.
  JaxprBuilder c;
  c.constvars("a:f32[1]").in("b:f32[]").out("b 1.0:f32[] a");
  check_golden(to_string(c.jaxpr()), "{ lambda a:f32[1]; b:f32[]. let  in (b, 1.0:f32[], a) }");
}
