#include "ir/errors.h"
#include "jaxpr_builder.h"
#include "runtime_test_util.h"

using namespace cjax;
using namespace cjax::runtime;
using namespace cjax::runtime::testing;

namespace {
// { lambda ; x:f32[] . let y = <prim> x c in (y,) } for a literal c.
std::shared_ptr<const Jaxpr> unary_with_literal(const Primitive& p, double c) {
  Jaxpr j;
  Var x = var(DType::f32), y = var(DType::f32);
  j.invars = {x};
  j.eqns = {make_eqn(p, {x, Literal::of(c, DType::f32)}, {y})};
  j.outvars = {y};
  return share(std::move(j));
}
}  // namespace

TEST_CASE("call-like primitives evaluate their inner jaxpr") {
  // { lambda ; a:f32[2] b:f32[2]. let c = add a b; d = sin c in (d, a) }
  Jaxpr j;
  Var a = var(DType::f32, {2}), b = var(DType::f32, {2}), c = var(DType::f32, {2}),
      d = var(DType::f32, {2});
  j.invars = {a, b};
  j.eqns = {make_eqn(add_p, {a, b}, {c}), make_eqn(sin_p, {c}, {d})};
  j.outvars = {d, a};
  auto inner = share(std::move(j));
  Buffer x = f32({2}, {0.5f, 1.0f}), y = f32({2}, {0.25f, -1.0f});
  for (const char* name : {"jit", "pjit", "remat2", "checkpoint", "closed_call"}) {
    // Each keeps its body in its own param: `jaxpr`, or `call_jaxpr` for closed_call.
    Params p{{"name", "f"}, {primitive_named(name).call_body, inner}};
    std::vector<Buffer> out = apply(name, p, {x, y}, {f32a({2}), f32a({2})});
    CHECK(close(vals(out[0]), {std::sin(0.75f), 0.0}));
    CHECK(out[1].data() == x.data());  // forwarded, not copied
  }
  // custom_jvp_call and custom_vjp_call keep theirs in `call_jaxpr` (wild-jaxprs 25 and 26).
  auto plus_one = unary_with_literal(add_p, 1.0);
  for (const char* name : {"custom_jvp_call", "custom_vjp_call"}) {
    Params p{{"name", "f"}, {"call_jaxpr", plus_one}, {"symbolic_zeros", false}};
    CHECK(vals(apply1(name, p, {f32_scalar(4.25f)}, f32a())) == std::vector<double>{5.25});
  }
}

TEST_CASE("a closed inner jaxpr brings its own consts") {
  // { lambda k:f32[]; x:f32[]. let y = mul x k in (y,) } with k = 3.
  Jaxpr j;
  Var k = var(DType::f32), x = var(DType::f32), y = var(DType::f32);
  j.constvars = {k};
  j.invars = {x};
  j.eqns = {make_eqn(mul_p, {x, k}, {y})};
  j.outvars = {y};
  j.consts = {f32_scalar(3.0f).to_const()};
  Params p{{"name", "g"}, {"jaxpr", share(std::move(j))}};
  CHECK(vals(apply1("jit", p, {f32_scalar(2.0f)}, f32a())) == std::vector<double>{6});
}

TEST_CASE("cond picks the branch by a clamped index or a bool") {
  // lax.switch's three branches from wild-jaxprs 06: +1, -2, +3.
  ParamTuple branches{{unary_with_literal(add_p, 1.0), unary_with_literal(sub_p, 2.0),
                       unary_with_literal(add_p, 3.0)}};
  Params p{{"branches", branches}};
  Buffer x = f32_scalar(5.0f);
  auto run = [&](Buffer index) { return apply1("cond", p, {index, x}, f32a()).element(0); };
  CHECK(run(i32_scalar(0)) == 6);
  CHECK(run(i32_scalar(1)) == 3);
  CHECK(run(i32_scalar(2)) == 8);
  CHECK(run(i32_scalar(7)) == 8);   // clamped to the last branch
  CHECK(run(i32_scalar(-3)) == 6);  // clamped to the first
  ParamTuple two{{unary_with_literal(sub_p, 1.0), unary_with_literal(add_p, 1.0)}};
  Params pb{{"branches", two}};
  CHECK(apply1("cond", pb, {boolean({}, {true}), x}, f32a()).element(0) == 6);
  CHECK(apply1("cond", pb, {boolean({}, {false}), x}, f32a()).element(0) == 4);
  CHECK_THROWS_AS(apply1("cond", p, {f32_scalar(1), x}, f32a()), UnsupportedError);
}

TEST_CASE("while loops until cond_jaxpr returns false") {
  // fori_loop(0, n, x -> x * k + 1) with k a body const: carries (i, n, x).
  Jaxpr cond;
  {
    Var i = var(DType::i32), n = var(DType::i32), x = var(DType::f32), r = var(DType::bool_);
    cond.invars = {i, n, x};
    cond.eqns = {make_eqn(lt_p, {i, n}, {r})};
    cond.outvars = {r};
  }
  Jaxpr body;
  {
    Var k = var(DType::f32), i = var(DType::i32), n = var(DType::i32), x = var(DType::f32);
    Var i1 = var(DType::i32), xk = var(DType::f32), x1 = var(DType::f32);
    body.invars = {k, i, n, x};
    body.eqns = {make_eqn(add_p, {i, Literal::of_int(1, DType::i32)}, {i1}),
                 make_eqn(mul_p, {x, k}, {xk}),
                 make_eqn(add_p, {xk, Literal::of(1.0, DType::f32)}, {x1})};
    body.outvars = {i1, n, x1};
  }
  Params p{{"body_jaxpr", share(std::move(body))},
           {"body_nconsts", 1},
           {"cond_jaxpr", share(std::move(cond))},
           {"cond_nconsts", 0}};
  std::vector<ShapedArray> outs{i32a(), i32a(), f32a()};
  std::vector<Buffer> r =
      apply("while", p, {f32_scalar(2.0f), i32_scalar(0), i32_scalar(3), f32_scalar(1.0f)}, outs);
  CHECK(vals(r[0]) == std::vector<double>{3});
  CHECK(vals(r[2]) == std::vector<double>{15});  // 1 -> 3 -> 7 -> 15
  // Zero trips: the carries come back unchanged.
  r = apply("while", p, {f32_scalar(2.0f), i32_scalar(5), i32_scalar(3), f32_scalar(1.0f)}, outs);
  CHECK(vals(r[0]) == std::vector<double>{5});
  CHECK(vals(r[2]) == std::vector<double>{1});
}

namespace {
// scan body (consts: w; carry: c; xs: x) -> (c + x * w, c): a running sum that emits the carry
// before each step.
std::shared_ptr<const Jaxpr> running_sum_body() {
  Jaxpr j;
  Var w = var(DType::f32), c = var(DType::f32), x = var(DType::f32), xw = var(DType::f32),
      c1 = var(DType::f32);
  j.invars = {w, c, x};
  j.eqns = {make_eqn(mul_p, {x, w}, {xw}), make_eqn(add_p, {c, xw}, {c1})};
  j.outvars = {c1, c};
  return share(std::move(j));
}
Params scan_params(std::shared_ptr<const Jaxpr> body, int64_t consts, int64_t carry, int64_t length,
                   bool reverse) {
  return {{"_split_transpose", false}, {"jaxpr", std::move(body)},
          {"length", length},          {"linear", ParamValue::bools({false, false, false})},
          {"num_carry", carry},        {"num_consts", consts},
          {"reverse", reverse},        {"unroll", 1}};
}
}  // namespace

TEST_CASE("scan: final carries, then ys stacked along a new leading axis") {
  Buffer xs = f32({4}, {1, 2, 3, 4});
  std::vector<ShapedArray> outs{f32a(), f32a({4})};
  std::vector<Buffer> r = apply("scan", scan_params(running_sum_body(), 1, 1, 4, false),
                                {f32_scalar(10.0f), f32_scalar(0.0f), xs}, outs);
  CHECK(vals(r[0]) == std::vector<double>{100});
  CHECK(vals(r[1]) == std::vector<double>{0, 10, 30, 60});
  // Reverse: iterates t = 3, 2, 1, 0; ys[t] is the output of the step that read xs[t].
  r = apply("scan", scan_params(running_sum_body(), 1, 1, 4, true),
            {f32_scalar(10.0f), f32_scalar(0.0f), xs}, outs);
  CHECK(vals(r[0]) == std::vector<double>{100});
  CHECK(vals(r[1]) == std::vector<double>{90, 70, 40, 0});
}

TEST_CASE("scan over rows of a matrix, and scan without xs") {
  // body (c:f32[2], x:f32[2]) -> (c + x, c + x): cumulative sum of rows.
  Jaxpr j;
  Var c = var(DType::f32, {2}), x = var(DType::f32, {2}), s = var(DType::f32, {2});
  j.invars = {c, x};
  j.eqns = {make_eqn(add_p, {c, x}, {s})};
  j.outvars = {s, s};
  Buffer xs = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  std::vector<Buffer> r = apply("scan", scan_params(share(std::move(j)), 0, 1, 3, false),
                                {Buffer::zeros(f32a({2})), xs}, {f32a({2}), f32a({3, 2})});
  CHECK(vals(r[0]) == std::vector<double>{9, 12});
  CHECK(vals(r[1]) == std::vector<double>{1, 2, 4, 6, 9, 12});

  // wild-jaxprs 04: scan with no xs, carry c -> 0.5 c + 1, length 4, ys = the new carry.
  Jaxpr k;
  Var a = var(DType::f32), d = var(DType::f32), e = var(DType::f32);
  k.invars = {a};
  k.eqns = {make_eqn(mul_p, {Literal::of(0.5, DType::f32), a}, {d}),
            make_eqn(add_p, {d, Literal::of(1.0, DType::f32)}, {e})};
  k.outvars = {e, e};
  r = apply("scan", scan_params(share(std::move(k)), 0, 1, 4, false), {f32_scalar(0.0f)},
            {f32a(), f32a({4})});
  CHECK(vals(r[0]) == std::vector<double>{1.875});
  CHECK(vals(r[1]) == std::vector<double>{1, 1.5, 1.75, 1.875});
  // Length 0: the carry is the init and ys are empty.
  Buffer empty = Buffer::zeros(f32a({0}));
  r = apply("scan", scan_params(running_sum_body(), 1, 1, 0, false),
            {f32_scalar(1.0f), f32_scalar(7.0f), empty}, {f32a(), f32a({0})});
  CHECK(vals(r[0]) == std::vector<double>{7});
  CHECK(r[1].aval().str_short() == "f32[0]");
}

TEST_CASE("an unsupported primitive inside a jit names the primitive") {
  Jaxpr j;
  Var a = var(DType::f32), b = var(DType::f32);
  j.invars = {a};
  j.eqns = {make_eqn(unknown_p, {a}, {b}, {{"axes", ParamValue(ParamTuple{{"i"}})}})};
  j.outvars = {b};
  Params p{{"name", "f"}, {"jaxpr", share(std::move(j))}};
  CHECK_THROWS_WITH(apply1("jit", p, {f32_scalar(1)}, f32a()),
                    "interpreter: no kernel for primitive 'tpu_custom_call'");
}
