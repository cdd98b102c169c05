#include "ir/rules/verify.h"

#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::string verify_error(const Jaxpr& j) {
  try {
    verify(j);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "<no error>";
}

// The first line of a verifier message (the printed eqn follows on the next line).
std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

Eqn raw_eqn(std::string_view prim, std::vector<Atom> ins, std::vector<Var> outs, Params p = {}) {
  return Eqn{&get_primitive(prim), std::move(ins), std::move(outs), std::move(p), {}};
}

}  // namespace

TEST_CASE("a well-formed jaxpr verifies") {
  // wild-jaxprs/01: add, mul, reduce_sum
  JaxprBuilder b;
  Var a = b.in(f32({3}));
  Var c = b.eqn("add", {a, Literal::of(1.0, DType::f32)});
  Var d = b.eqn("mul", {c, c});
  Var e =
      b.eqn("reduce_sum", {d}, {{"axes", ParamValue::ints({0})}, {"out_sharding", NoneParam{}}});
  JaxprRef j = b.done({e, a, Literal::of(2.0, DType::f32)});
  CHECK_NOTHROW(verify(*j));
}

TEST_CASE("an eqn whose output disagrees with its shape rule") {
  Var a(f32({3}));
  Jaxpr j;
  j.invars = {a};
  Var out(f32({4}));
  j.eqns.push_back(raw_eqn("sin", {a}, {out}));
  j.outvars = {out};
  std::string msg = verify_error(j);
  CHECK(first_line(msg) == "eqn 0 (sin): output f32[4] does not match the shape rule's f32[3]");
  // The printed eqn follows on the next line.
  CHECK_THAT(msg, Contains("\n  in: ") && Contains("sin"));
}

TEST_CASE("messages name the eqn's index and source location") {
  JaxprBuilder b;
  Var a = b.in(f32({3}));
  Var c = b.eqn("cos", {a});
  b.j.eqns.push_back(raw_eqn("sin", {c}, {Var(f32({2}))}));
  SourceInfo where;
  where.file = "examples/tutorial.cc";
  where.function = "cjax::Array g(const cjax::Array&)";
  where.line = 12;
  where.column = 10;
  b.j.eqns.back().source = where;
  JaxprRef j = b.done({c});
  CHECK(first_line(verify_error(*j)) ==
        "eqn 1 (sin) from examples/tutorial.cc:12:10 (g): output f32[2] does not match the shape "
        "rule's f32[3]");
}

TEST_CASE("a shape rule error is reported through the eqn") {
  Var a(f32({3})), b(f32({4})), c(f32({3}));
  Jaxpr j;
  j.invars = {a, b};
  j.eqns.push_back(raw_eqn("add", {a, b}, {c}));
  j.outvars = {c};
  CHECK(first_line(verify_error(j)) == "eqn 0 (add): add: incompatible shapes f32[3] and f32[4]");
}

TEST_CASE("output count mismatches are reported") {
  Var a(f32({3}));
  Jaxpr j;
  j.invars = {a};
  Var x(f32({3})), y(f32({3}));
  j.eqns.push_back(raw_eqn("sin", {a}, {x, y}));
  j.outvars = {x};
  CHECK(first_line(verify_error(j)) == "eqn 0 (sin): has 2 outputs but the shape rule gives 1");
}

TEST_CASE("variables must be defined once, before use") {
  Var a(f32({3})), c(f32({3})), d(f32({3}));
  a.set_hint("a");
  c.set_hint("c");
  {
    Jaxpr j;  // c is read by eqn 0 but only defined by eqn 1
    j.invars = {a};
    j.eqns.push_back(raw_eqn("sin", {c}, {d}));
    j.eqns.push_back(raw_eqn("cos", {a}, {c}));
    j.outvars = {d};
    CHECK(first_line(verify_error(j)) ==
          "eqn 0 (sin): input 0 (c:f32[3]) is used before it is defined");
  }
  {
    Jaxpr j;  // c defined twice
    j.invars = {a};
    j.eqns.push_back(raw_eqn("cos", {a}, {c}));
    j.eqns.push_back(raw_eqn("sin", {a}, {c}));
    j.outvars = {c};
    CHECK(first_line(verify_error(j)) == "eqn 1 (sin): output 0 (c:f32[3]) is already defined");
  }
  {
    Jaxpr j;  // an eqn may not redefine an invar
    j.invars = {a};
    j.eqns.push_back(raw_eqn("sin", {a}, {a}));
    j.outvars = {a};
    CHECK(first_line(verify_error(j)) == "eqn 0 (sin): output 0 (a:f32[3]) is already defined");
  }
  {
    Jaxpr j;  // the same var as two invars
    j.invars = {a, a};
    j.outvars = {a};
    CHECK(verify_error(j) == "invar 1 (a:f32[3]) is defined twice");
  }
  {
    Jaxpr j;  // an outvar nothing defines
    j.invars = {a};
    j.outvars = {a, d};
    CHECK(verify_error(j) == "outvar 1 (f32[3]) is not defined");
  }
  {
    Jaxpr j;  // a dropped output read later
    Var dropped = Var::drop(f32({3}));
    j.invars = {a};
    j.eqns.push_back(raw_eqn("sin", {a}, {dropped}));
    j.eqns.push_back(raw_eqn("cos", {dropped}, {d}));
    j.outvars = {d};
    CHECK(first_line(verify_error(j)) == "eqn 1 (cos): input 0 (f32[3]) reads a dropped variable");
  }
}

TEST_CASE("constvars are definitions and consts must match them") {
  JaxprBuilder b;
  Var k = b.constvar(f32({3}));
  Var x = b.in(f32({3}));
  Var y = b.eqn("add", {x, k});
  Jaxpr j = *b.done({y});
  CHECK_NOTHROW(verify(j));
  j.consts.push_back(ConstValue{f32({3}), nullptr});
  CHECK_NOTHROW(verify(j));
  j.consts[0].aval = f32({4});
  CHECK(verify_error(j) == "const 0 is f32[4] but its constvar is f32[3]");
  j.consts.push_back(ConstValue{f32({3}), nullptr});
  CHECK(verify_error(j) == "the jaxpr has 2 consts for 1 constvars");
}

TEST_CASE("nested jaxprs are verified as closed scopes") {
  // cond whose second branch has a bad eqn
  JaxprRef good = unary_jaxpr("sin", f32({}));
  Var p(f32({})), q(f32({2}));
  Jaxpr bad_branch;
  bad_branch.invars = {p};
  bad_branch.eqns.push_back(raw_eqn("cos", {p}, {q}));
  bad_branch.outvars = {q};
  JaxprBuilder b;
  Var idx = b.in(i32({}));
  Var x = b.in(f32({}));
  Var out(f32({}));
  b.j.eqns.push_back(
      raw_eqn("cond", {idx, x}, {out},
              {{"branches", ParamTuple{{good, std::make_shared<const Jaxpr>(bad_branch)}}}}));
  JaxprRef j = b.done({out});
  CHECK(first_line(verify_error(*j)) ==
        "eqn 0 (cond): branches[1]: eqn 0 (cos): output f32[2] does not match the shape rule's "
        "f32[]");

  // A nested jaxpr may not read a variable of the enclosing one.
  JaxprBuilder outer;
  Var a = outer.in(f32({}));
  Jaxpr inner;
  Var c(f32({}));
  inner.invars = {c};
  Var d(f32({}));
  inner.eqns.push_back(raw_eqn("add", {c, a}, {d}));
  inner.outvars = {d};
  Var e(f32({}));
  outer.j.eqns.push_back(
      raw_eqn("jit", {a}, {e}, {{"name", "f"}, {"jaxpr", std::make_shared<const Jaxpr>(inner)}}));
  JaxprRef j2 = outer.done({e});
  CHECK(first_line(verify_error(*j2)) ==
        "eqn 0 (jit): jaxpr: eqn 0 (add): input 1 (f32[]) is used before it is defined");

  // An outvar missing inside a nested jaxpr.
  Jaxpr hollow;
  Var h(f32({}));
  hollow.invars = {Var(f32({}))};
  hollow.outvars = {h};
  JaxprBuilder third;
  Var z = third.in(f32({}));
  Var w(f32({}));
  third.j.eqns.push_back(raw_eqn("remat2", {z}, {w},
                                 {{"jaxpr", std::make_shared<const Jaxpr>(hollow)},
                                  {"prevent_cse", true},
                                  {"differentiated", false},
                                  {"policy", NoneParam{}}}));
  JaxprRef j3 = third.done({w});
  CHECK(first_line(verify_error(*j3)) == "eqn 0 (remat2): jaxpr: outvar 0 (f32[]) is not defined");
}

TEST_CASE("opaque eqns are checked for scoping only") {
  Var a(f32({3})), out(i32({7}));
  Jaxpr j;
  j.invars = {a};
  j.eqns.push_back(Eqn{&opaque_primitive("rms_norm_fwd"), {a}, {out}, {{"eps", 1e-5}}, {}});
  j.outvars = {out};
  CHECK_NOTHROW(verify(j));
  Var undefined(f32({3}));
  j.eqns[0].inputs = {undefined};
  CHECK(first_line(verify_error(j)) ==
        "eqn 0 (rms_norm_fwd): input 0 (f32[3]) is used before it is defined");
}

TEST_CASE("an eqn without a primitive is an error, not a crash") {
  Var a(f32({3})), b(f32({3}));
  Jaxpr j;
  j.invars = {a};
  j.eqns.push_back(Eqn{nullptr, {a}, {b}, {}, {}});
  j.outvars = {b};
  CHECK_THAT(verify_error(j), StartsWith("eqn 0 (null): has no primitive"));
}
