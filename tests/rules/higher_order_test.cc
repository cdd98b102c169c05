#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

TEST_CASE("jit and remat2 are typed by their jaxpr") {
  JaxprRef body = unary_jaxpr("sin", f32({3}));
  for (const char* name : {"jit", "remat2"}) {
    INFO(name);
    Params p{{"jaxpr", body}};
    if (std::string_view(name) == "jit") p.set("name", "f");
    CHECK(infer_str(name, {f32({3})}, p) == std::vector<std::string>{"f32[3]"});
    CHECK(infer_error(name, {f32({4})}, p) ==
          std::string(name) + ": the jaxpr takes (f32[3]) but is given (f32[4])");
    CHECK(infer_error(name, {f32({3}), f32({3})}, p) ==
          std::string(name) + ": the jaxpr takes (f32[3]) but is given (f32[3], f32[3])");
    CHECK(infer_error(name, {f32({3})}, {}) == std::string(name) + ": missing param 'jaxpr'");
  }
}

TEST_CASE("jit results may be literals of the inner jaxpr") {
  // wild-jaxprs/24: jaxpr={ lambda ; a:f32[1]. let  in (2:i32[], a) }
  JaxprBuilder b;
  Var a = b.in(f32({1}));
  JaxprRef inner = b.done({Literal::of_int(2, DType::i32), a});
  CHECK(infer_str("jit", {f32({1})}, {{"name", "<lambda>"}, {"jaxpr", inner}}) ==
        std::vector<std::string>{"i32[]", "f32[1]"});
}

TEST_CASE("custom_jvp_call and custom_vjp_call are typed by call_jaxpr") {
  // wild-jaxprs/25 and 26: call_jaxpr={ lambda ; c:f32[1]. let d:f32[1] = add c 1.0:f32[] in (d,) }
  JaxprBuilder b;
  Var c = b.in(f32({1}));
  JaxprRef call = b.done({b.eqn("add", {c, Literal::of(1.0, DType::f32)})});
  Params jvp{{"name", "f"},
             {"call_jaxpr", call},
             {"jvp", "f_jvp"},
             {"symbolic_zeros", false},
             {"num_consts", 0}};
  CHECK(infer_str("custom_jvp_call", {f32({1})}, jvp) == std::vector<std::string>{"f32[1]"});
  CHECK(infer_error("custom_jvp_call", {i32({1})}, jvp) ==
        "custom_jvp_call: call_jaxpr takes (f32[1]) but is given (i32[1])");
  Params vjp{{"name", "f"},    {"bwd", "f_bwd"},          {"call_jaxpr", call},
             {"fwd", "f_fwd"}, {"symbolic_zeros", false}, {"num_consts", 0}};
  CHECK(infer_str("custom_vjp_call", {f32({1})}, vjp) == std::vector<std::string>{"f32[1]"});
  CHECK(infer_error("custom_vjp_call", {f32({2})}, vjp) ==
        "custom_vjp_call: call_jaxpr takes (f32[1]) but is given (f32[2])");
}

TEST_CASE("device_put passes its operands through") {
  Params p{{"devices", ParamTuple{{NoneParam{}, NoneParam{}}}},
           {"srcs", ParamTuple{{NoneParam{}, NoneParam{}}}},
           {"copy_semantics", ParamTuple{{OpaqueParam{"ArrayCopySemantics.REUSE_INPUT"},
                                          OpaqueParam{"ArrayCopySemantics.REUSE_INPUT"}}}}};
  CHECK(infer_str("device_put", {f32({3}), i32({})}, p) ==
        std::vector<std::string>{"f32[3]", "i32[]"});
  CHECK(infer_error("device_put", {f32({3})}, p) ==
        "device_put: param 'devices' has 2 entries for 1 operands (got f32[3])");
}

namespace {
// { lambda ; x:<aval>. let y = <prim> x <literal> in (y,) }
JaxprRef with_literal(std::string_view prim, ShapedArray aval, double value) {
  JaxprBuilder b;
  Var x = b.in(aval);
  return b.done({b.eqn(prim, {x, Literal::of(value, aval.dtype)})});
}
ParamValue branches(std::vector<JaxprRef> js) {
  ParamTuple t;
  for (auto& j : js) t.items.emplace_back(std::move(j));
  return t;
}
}  // namespace

TEST_CASE("cond") {
  // wild-jaxprs/06: e:f32[] = cond[branches=(3 branches f32[] -> f32[])] d b  with d:i32[]
  ParamValue three = branches({with_literal("add", f32({}), 1.0), with_literal("sub", f32({}), 2.0),
                               with_literal("add", f32({}), 3.0)});
  CHECK(infer_str("cond", {i32({}), f32({})}, {{"branches", three}}) ==
        std::vector<std::string>{"f32[]"});
  CHECK(infer_error("cond", {i32({}), f32({3})}, {{"branches", three}}) ==
        "cond: branch 0 takes (f32[]) but is given (f32[3])");
  CHECK(infer_error("cond", {f32({}), f32({})}, {{"branches", three}}) ==
        "cond: the index must be a scalar int32 or bool (got f32[], f32[])");
  CHECK(infer_error("cond", {boolean({}), f32({})}, {{"branches", three}}) ==
        "cond: a bool index needs exactly 2 branches (got bool[], f32[])");
  ParamValue two = branches({with_literal("add", f32({}), 1.0), unary_jaxpr("sin", f32({}))});
  CHECK(infer_str("cond", {boolean({}), f32({})}, {{"branches", two}}) ==
        std::vector<std::string>{"f32[]"});
  ParamValue mismatched =
      branches({unary_jaxpr("sin", f32({})), unary_jaxpr("is_finite", f32({}))});
  CHECK(infer_error("cond", {i32({}), f32({})}, {{"branches", mismatched}}) ==
        "cond: branch 1 returns (bool[]) but branch 0 returns (f32[])");
  CHECK(infer_error("cond", {i32({}), f32({})}, {{"branches", ParamTuple{}}}) ==
        "cond: needs at least one branch");
}

TEST_CASE("while") {
  // wild-jaxprs/08: _:i32[] _:i32[] e:f32[16] = while[body_nconsts=2 cond_nconsts=0] c a 0 b d
  JaxprBuilder body;
  Var f = body.in(f32({16})), g = body.in(f32({16})), h = body.in(i32({})), i = body.in(i32({}));
  Var j = body.in(f32({16}));
  Var k = body.eqn("add", {h, Literal::of_int(1, DType::i32)});
  Var l = body.eqn("mul", {f, Literal::of(3.0, DType::f32)});
  Var m = body.eqn("add", {j, l});
  Var n = body.eqn("add", {m, g});
  JaxprRef body_jaxpr = body.done({k, i, n});
  JaxprBuilder cond;
  Var o = cond.in(i32({})), p = cond.in(i32({}));
  cond.in(f32({16}));
  JaxprRef cond_jaxpr = cond.done({cond.eqn("lt", {o, p})});
  Params params{{"body_jaxpr", body_jaxpr},
                {"body_nconsts", 2},
                {"cond_jaxpr", cond_jaxpr},
                {"cond_nconsts", 0}};
  std::vector<ShapedArray> in{f32({16}), f32({16}), i32({}), i32({}), f32({16})};
  CHECK(infer_str("while", in, params) == std::vector<std::string>{"i32[]", "i32[]", "f32[16]"});
  in[4] = f32({15});
  CHECK(infer_error("while", in, params) ==
        "while: cond_jaxpr takes (i32[], i32[], f32[16]) but is given (i32[], i32[], f32[15])");
  in[4] = f32({16});
  params.set("body_jaxpr", cond_jaxpr);
  CHECK(infer_error("while", in, params) ==
        "while: body_jaxpr takes (i32[], i32[], f32[16]) but is given "
        "(f32[16], f32[16], i32[], i32[], f32[16])");
  // cond_nconsts and body_nconsts decide which operands each jaxpr sees.
  params.set("body_jaxpr", body_jaxpr);
  params.set("body_nconsts", 0);
  params.set("cond_nconsts", 2);
  params.set("cond_jaxpr", body_jaxpr);
  CHECK(infer_error("while", in, params) ==
        "while: body_jaxpr takes (f32[16], f32[16], i32[], i32[], f32[16]) but is given "
        "(i32[], i32[], f32[16])");
  params.set("cond_nconsts", -1);
  CHECK(infer_error("while", in, params) ==
        "while: param 'cond_nconsts' must be non-negative, got -1");
}

TEST_CASE("while's cond must return one bool scalar") {
  JaxprRef body = unary_jaxpr("sin", f32({}));
  Params params{
      {"body_jaxpr", body}, {"body_nconsts", 0}, {"cond_jaxpr", body}, {"cond_nconsts", 0}};
  CHECK(infer_error("while", {f32({})}, params) ==
        "while: cond_jaxpr must return one bool[], returns (f32[])");
  // A body whose carry changes type.
  JaxprRef test = unary_jaxpr("is_finite", f32({}));
  params.set("cond_jaxpr", test);
  params.set("body_jaxpr", test);
  CHECK(infer_error("while", {f32({})}, params) ==
        "while: body_jaxpr returns (bool[]) for the carry (f32[])");
}

TEST_CASE("scan") {
  // wild-jaxprs/09: d:f32[] e:f32[16] = scan[length=16 num_carry=1 num_consts=1 ...] b 0.0 a c
  JaxprBuilder b;
  Var f = b.in(f32({})), g = b.in(f32({})), h = b.in(f32({})), i = b.in(f32({}));
  Var j = b.eqn("mul", {h, i});
  Var l = b.eqn("add", {g, j});
  Var n = b.eqn("add", {l, f});
  JaxprRef body = b.done({n, g});
  Params params{{"jaxpr", body},   {"length", 16},     {"num_carry", 1},
                {"num_consts", 1}, {"reverse", false}, {"unroll", 1}};
  std::vector<ShapedArray> in{f32({}), f32({}), f32({16}), f32({16})};
  CHECK(infer_str("scan", in, params) == std::vector<std::string>{"f32[]", "f32[16]"});
  in[3] = f32({15});
  CHECK(infer_error("scan", in, params) ==
        "scan: scanned-over operands must have leading dimension 16 "
        "(got f32[], f32[], f32[16], f32[15])");
  in[3] = f32({16, 2});
  CHECK(infer_error("scan", in, params) ==
        "scan: the jaxpr takes (f32[], f32[], f32[], f32[]) but is given "
        "(f32[], f32[], f32[], f32[2])");
  // The same body read with two carries and no consts: no stacked outputs.
  params.set("num_consts", 0);
  params.set("num_carry", 2);
  params.set("length", 2);
  CHECK(infer_str("scan", {f32({}), f32({}), f32({2}), f32({2})}, params) ==
        std::vector<std::string>{"f32[]", "f32[]"});
  params.set("num_carry", 5);
  CHECK(infer_error("scan", {f32({}), f32({}), f32({2}), f32({2})}, params) ==
        "scan: expects at least 5 operands for num_consts=0 num_carry=5 "
        "(got f32[], f32[], f32[2], f32[2])");
}

TEST_CASE("scan's carry out must match the carry in") {
  // { lambda ; c:f32[]. let d = is_finite c in (d,) }: the carry turns into a bool.
  JaxprRef body = unary_jaxpr("is_finite", f32({}));
  Params params{{"jaxpr", body},   {"length", 3},      {"num_carry", 1},
                {"num_consts", 0}, {"reverse", false}, {"unroll", 1}};
  CHECK(infer_error("scan", {f32({})}, params) ==
        "scan: the jaxpr returns (bool[]) for the carry (f32[])");
  // wild-jaxprs/04: one carry, one stacked output.
  JaxprBuilder b;
  Var c = b.in(f32({}));
  Var d = b.eqn("mul", {Literal::of(0.5, DType::f32), c});
  Var e = b.eqn("add", {d, Literal::of(1.0, DType::f32)});
  params.set("jaxpr", b.done({e, e}));
  params.set("length", 4);
  CHECK(infer_str("scan", {f32({})}, params) == std::vector<std::string>{"f32[]", "f32[4]"});
}
