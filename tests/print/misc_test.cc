// Single eqns, param values, naming and edge cases of the printer.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "ir/errors.h"
#include "ir/policy.h"
#include "ir/print/printer.h"
#include "tests/print/builder.h"

using namespace cjax;
using namespace cjax::test;

namespace {

class FakePolicy : public Policy {
 public:
  std::string repr() const override {
    return "<function dots_with_no_batch_dims_saveable at 0x7f3a9c1b2d40>";
  }
  PolicyDecision decide(const Primitive&, std::span<const ShapedArray>,
                        const Params&) const override {
    return {};
  }
};

}  // namespace

TEST_CASE("one eqn prints with fresh names, outputs first") {
  JaxprBuilder b;
  b.in("x:f32[3]").eqn("add", "y:f32[3]", "x 1.0:f32[]");
  CHECK(to_string(b.jaxpr().eqns[0]) == "a:f32[3] = add b 1.0:f32[]");

  JaxprBuilder d;
  d.in("x:f32[5,4] y:f32[4]").eqn("dot_general", "z:f32[5]", "x y", dot_params(dims({1}, {0})));
  CHECK(to_string(d.jaxpr().eqns[0]) == R"(a:f32[5] = dot_general[
  dimension_numbers=(([1], [0]), ([], []))
  preferred_element_type=float32
] b c)");
}

TEST_CASE("an eqn without operands keeps the space before them") {
  Params iota{{"dtype", DType::i32}, {"shape", ParamValue::ints({3})}, {"dimension", 0}};
  JaxprBuilder b;
  b.eqn("iota", "a:i32[3]", "", iota).out("a");
  CHECK(to_string(b.jaxpr()) ==
        "{ lambda ; . let a:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)]  in (a,) }");
  b.eqn("iota", "c:i32[3]", "", iota).out("a c");
  CHECK(to_string(b.jaxpr()) ==
        "{ lambda ; . let\n"
        "    a:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)] \n"
        "    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)] \n"
        "  in (a, b) }");
}

TEST_CASE("an eqn without outputs prints no ` = `") {
  JaxprBuilder b;
  b.in("a:f32[]").eqn("debug_print", "", "a", {{"fmt", "x={}"}}).out("a");
  CHECK(to_string(b.jaxpr()) == "{ lambda ; a:f32[]. let debug_print[fmt=x={}] a in (a,) }");
}

TEST_CASE("param values print as Python's str, and repr inside containers") {
  CHECK(param_value_to_string(NoneParam{}) == "None");
  CHECK(param_value_to_string(true) == "True");
  CHECK(param_value_to_string(false) == "False");
  CHECK(param_value_to_string(-3) == "-3");
  CHECK(param_value_to_string(2.5) == "2.5");
  CHECK(param_value_to_string(1e-6) == "1e-06");
  CHECK(param_value_to_string(1.0) == "1.0");
  CHECK(param_value_to_string("rows") == "rows");
  CHECK(param_value_to_string(DType::f32) == "float32");
  CHECK(param_value_to_string(DType::bool_) == "bool");
  CHECK(param_value_to_string(ParamValue::ints({0})) == "(0,)");
  CHECK(param_value_to_string(ParamValue::ints({1, 0})) == "(1, 0)");
  CHECK(param_value_to_string(ParamValue::ints({})) == "()");
  CHECK(param_value_to_string(ParamValue::int_list({1})) == "[1]");
  CHECK(param_value_to_string(ParamValue::int_list({})) == "[]");
  CHECK(param_value_to_string(dims({1}, {0})) == "(([1], [0]), ([], []))");
  CHECK(param_value_to_string(ParamTuple{{"rows"}}) == "('rows',)");
  CHECK(param_value_to_string(ParamTuple{{"it's", "a\\b\n"}}) == R"(("it's", 'a\\b\n'))");
  CHECK(param_value_to_string(ParamTuple{{NoneParam{}, 0, 1.5, true}}) == "(None, 0, 1.5, True)");
  CHECK(param_value_to_string(ParamList{{DType::f32}}) == "[dtype('float32')]");
  CHECK(param_value_to_string(ParamTuple{{DType::bf16}}) == "(dtype(bfloat16),)");
  CHECK(param_value_to_string(OpaqueParam{"GatherDimensionNumbers(offset_dims=(0,))"}) ==
        "GatherDimensionNumbers(offset_dims=(0,))");
  CHECK(param_value_to_string(PolicyRef(std::make_shared<FakePolicy>())) ==
        "<function dots_with_no_batch_dims_saveable at 0xXXXXXXXXXXXX>");
  CHECK(param_value_to_string(OpaqueParam{"<function f at 0x1f>, at 0x"}) ==
        "<function f at 0xXX>, at 0x");
}

TEST_CASE("a policy param prints its masked repr") {
  JaxprBuilder body;
  body.in("x:f32[]").eqn("sin", "y:f32[]", "x").out("y");
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn("remat2", "b:f32[]", "a",
           {{"jaxpr", body.build()},
            {"policy", PolicyRef(std::make_shared<FakePolicy>())},
            {"prevent_cse", true},
            {"differentiated", true}})
      .out("b");
  CHECK(to_string(b.jaxpr()) == R"({ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      policy=<function dots_with_no_batch_dims_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] a
  in (b,) })");
}

TEST_CASE("a jaxpr that is not a param of its own prints as a fresh printout") {
  JaxprBuilder inner;
  inner.in("x:f32[]").eqn("sin", "y:f32[]", "x").out("y");
  JaxprRef j = inner.build();
  CHECK(param_value_to_string(j) == "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }");
  // Inside a list (not a tuple of jaxprs only) JAX falls back to str() of each jaxpr.
  JaxprBuilder b;
  b.in("p:f32[]").eqn("weird", "q:f32[]", "p", {{"fns", ParamList{{j}}}}).out("q");
  CHECK(to_string(b.jaxpr()) == R"({ lambda ; a:f32[]. let
    b:f32[] = weird[fns=[{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }]] a
  in (b,) })");
}

TEST_CASE("an empty tuple param is a tuple of no jaxprs") {
  JaxprBuilder b;
  b.in("a:f32[]").eqn("reduce_sum", "b:f32[]", "a", {{"axes", ParamTuple{}}}).out("b");
  CHECK(to_string(b.jaxpr()) ==
        "{ lambda ; a:f32[]. let b:f32[] = reduce_sum[axes=()] a in (b,) }");
}

TEST_CASE("names run a..z, ba..zz, baa with no aa") {
  JaxprBuilder b;
  std::string binders;
  for (int i = 0; i < 677; ++i) binders += fmt::format("v{}:f32[] ", i);
  b.in(binders).out("v676");
  // Undo the wrapping of the binder list (a break is a newline plus indent).
  std::string s;
  for (const char c : to_string(b.jaxpr())) {
    if (c == '\n') s += ' ';
    if (c == ' ' && !s.empty() && s.back() == ' ') continue;
    if (c != '\n') s += c;
  }
  CHECK(s.find(" z:f32[] ba:f32[] bb:f32[]") != std::string::npos);
  CHECK(s.find(" zy:f32[] zz:f32[] baa:f32[]. let") != std::string::npos);
  CHECK(s.find(" aa:") == std::string::npos);
  CHECK(s.substr(s.size() - 11) == "in (baa,) }");
}

TEST_CASE("the width is a parameter") {
  JaxprBuilder b;
  b.in("a:f32[5]").eqn("tanh", "b:f32[5]", "a").eqn("exp", "c:f32[5]", "b").out("c");
  CHECK(to_string(b.jaxpr(), 80) ==
        "{ lambda ; a:f32[5]. let b:f32[5] = tanh a; c:f32[5] = exp b in (c,) }");
  CHECK(to_string(b.jaxpr(), 40) == R"({ lambda ; a:f32[5]. let
    b:f32[5] = tanh a
    c:f32[5] = exp b
  in (c,) })");
}

TEST_CASE("print rules: opaque primitives keep stored order, a failing rule falls back") {
  Primitive opaque;
  opaque.name = "custom_thing";
  opaque.opaque = true;
  Primitive throwing;
  throwing.name = "picky";
  throwing.print_params = [](const Params& p) -> std::vector<ParamRef> {
    p.get_int("missing");  // throws cjax::Error
    return {};
  };
  JaxprBuilder b;
  b.in("a:f32[]")
      .eqn(opaque, "b:f32[]", "a", {{"z", 1}, {"a", 2}})
      .eqn(throwing, "c:f32[]", "b", {{"z", 1}, {"a", 2}})
      .out("c");
  CHECK(to_string(b.jaxpr()) == R"({ lambda ; a:f32[]. let
    b:f32[] = custom_thing[z=1 a=2] a
    c:f32[] = picky[a=2 z=1] b
  in (c,) })");
}

TEST_CASE("dropped vars and malformed eqns print without crashing") {
  JaxprBuilder b;
  b.in("a:f32[]").eqn("sin", "_:f32[]", "a").out("a");
  CHECK(to_string(b.jaxpr()) == "{ lambda ; a:f32[]. let _:f32[] = sin a in (a,) }");
  CHECK(to_string(Eqn{}) == "? ");
  Eqn e;
  e.prim = &prim("jit");
  e.params.set("jaxpr", JaxprRef(b.build()));
  e.inputs.emplace_back(Var(ShapedArray(DType::f32, {})));
  e.inputs.emplace_back(Var(ShapedArray(DType::f32, {})));  // arity mismatch: no name re-use
  CHECK(to_string(e) == "jit[jaxpr={ lambda ; a:f32[]. let _:f32[] = sin a in (a,) }] b c");
}
