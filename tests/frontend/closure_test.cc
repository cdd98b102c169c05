// Closures (constvars and literals), nested traces and eval_jaxpr.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::f32;
using cjax::testing::i32;

TEST_CASE("closed-over values: arrays become constvars, scalars literals") {
  Array offset = array({1.f, 2.f, 3.f});
  Array two = array(2.f);  // a concrete rank-0 array: a strong literal
  double k = 0.5;          // a C++ number: a weak literal of the other operand's dtype
  auto f = [&](const Array& x) { return (x + offset) * two * k + offset; };
  Jaxpr j = make_jaxpr(f)(f32({3}));
  CHECK(to_string(j) == R"({ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = add b a
    d:f32[3] = mul c 2.0:f32[]
    e:f32[3] = mul d 0.5:f32[]
    f:f32[3] = add e a
  in (f,) })");
  // One constvar for the array, however often it is used.
  REQUIRE(j.constvars.size() == 1);
  REQUIRE(j.consts.size() == 1);
  CHECK(j.consts[0].aval.str_short() == "f32[3]");
  // An integer scalar array is not folded into the literal's type: it is converted.
  Array ione = array(1);
  auto g = [&](const Array& x) { return x + ione; };
  CHECK(to_string(make_jaxpr(g)(f32({}))) == R"({ lambda ; a:f32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] 1:i32[]
    c:f32[] = add a b
  in (c,) })");
}

TEST_CASE("outputs that are not computed: inputs, constants and literals") {
  Array table = array({1.f, 2.f});
  auto f = [&](const Array& x) { return std::tuple<Array, Array, Array>{x, Array(2.0), table}; };
  CHECK(to_string(make_jaxpr(f)(f32({3}))) ==
        "{ lambda a:f32[2]; b:f32[3]. let  in (b, 2.0:f32[], a) }");
}

TEST_CASE("a nested trace captures tracers of the enclosing trace as constvars") {
  ClosedTrace inner;
  auto outer = [&](const Array& x, const Array& y) {
    Array s = np::sin(x);
    ShapedArray in_aval[] = {y.aval()};
    inner = trace_to_jaxpr(
        [&](std::span<const Array> a) -> std::vector<Array> { return {a[0] * s + 1.0}; }, in_aval);
    CHECK(trace_depth() == 1);
    // Inlining the inner jaxpr into the outer trace.
    return eval_jaxpr(inner, std::vector<Array>{y})[0];
  };
  Jaxpr j = make_jaxpr(outer)(f32({3}), f32({3}));
  CHECK(to_string(inner.jaxpr) == R"({ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = mul b a
    d:f32[3] = add c 1.0:f32[]
  in (d,) })");
  REQUIRE(inner.consts.size() == 1);
  CHECK(inner.consts[0].is_tracer());  // the outer `s`
  CHECK(inner.jaxpr.consts.empty());   // not concrete: no ConstValues
  CHECK(to_string(j) == R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sin a
    d:f32[3] = mul b c
    e:f32[3] = add d 1.0:f32[]
  in (e,) })");
  CHECK_FALSE(is_tracing());
}

TEST_CASE("TraceScope builds a jaxpr by hand") {
  TraceScope scope;
  Array a = scope.new_arg(ShapedArray(DType::f32, {2}));
  Array b = np::exp(a);
  Array outs[] = {b, a};
  ClosedTrace t = scope.finish(outs);
  CHECK(to_string(t.jaxpr) == "{ lambda ; a:f32[2]. let b:f32[2] = exp a in (b, a) }");
  CHECK(t.consts.empty());
}

TEST_CASE("eval_jaxpr runs a traced jaxpr eagerly and keeps source locations when inlining") {
  auto g = [](const Array& W, const Array& x) { return np::sin(np::dot(W, x)); };
  Jaxpr j = make_jaxpr(g)(f32({2, 2}), f32({2}));
  Array W = array({{1.f, 2.f}, {3.f, 4.f}}), x = array({1.f, -1.f});
  std::vector<Array> args{W, x};
  std::vector<Array> out = eval_jaxpr(j, {}, args);
  REQUIRE(out.size() == 1);
  CHECK(out[0].to_vector<double>() == g(W, x).to_vector<double>());
  // Replayed under a trace, the eqns keep their original locations.
  auto h = [&](const Array& W2, const Array& x2) {
    std::vector<Array> a{W2, x2};
    return eval_jaxpr(j, {}, a)[0];
  };
  Jaxpr inl = make_jaxpr(h)(f32({2, 2}), f32({2}));
  REQUIRE(inl.eqns.size() == 2);
  CHECK(inl.eqns[0].source.line == j.eqns[0].source.line);
  CHECK(inl.eqns[1].source.column == j.eqns[1].source.column);
  CHECK(to_string(inl) == to_string(j));
  // Wrong arguments are reported.
  std::vector<Array> bad{W};
  CHECK_THROWS_AS(eval_jaxpr(j, {}, bad), TypeError);
  // A jaxpr with constvars evaluates with its attached consts.
  Array off = array({10.f, 20.f});
  Jaxpr c = make_jaxpr([&](const Array& v) { return v + off; })(f32({2}));
  std::vector<Array> one{x};
  CHECK(eval_jaxpr(c, {}, one)[0].to_vector<double>() == std::vector<double>{11, 19});
}

TEST_CASE("make_jaxpr inside make_jaxpr closes over the outer tracer") {
  std::string inner_text;
  auto outer = [&](const Array& x) {
    inner_text = to_string(make_jaxpr([&](const Array& y) { return y * x; })(f32({3})));
    return x;
  };
  CHECK(to_string(make_jaxpr(outer)(f32({3}))) == "{ lambda ; a:f32[3]. let  in (a,) }");
  CHECK(inner_text == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }");
}

TEST_CASE("a jaxpr with a jit eqn evaluates eagerly") {
  Jaxpr j = make_jaxpr([](const Array& x) { return np::where(x > 0, x, 0.0); })(f32({3}));
  std::vector<Array> args{array({-1.f, 2.f, -3.f})};
  CHECK(eval_jaxpr(j, {}, args)[0].to_vector<double>() == std::vector<double>{0, 2, 0});
}

TEST_CASE("EagerScope computes concrete values inside a trace") {
  Array computed;
  auto f = [&](const Array& x) {
    {
      EagerScope eager;
      CHECK_FALSE(is_tracing());
      computed = np::ones({2}) * 3;
      CHECK_THROWS_WITH(np::sin(x), Catch::Contains("escaped tracer"));
    }
    CHECK(is_tracing());
    return x + computed;
  };
  CHECK(to_string(make_jaxpr(f)(f32({2}))) ==
        "{ lambda a:f32[2]; b:f32[2]. let c:f32[2] = add b a in (c,) }");
  CHECK(computed.is_concrete());
  CHECK(computed.to_vector<double>() == std::vector<double>{3, 3});
}
