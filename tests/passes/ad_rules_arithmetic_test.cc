// jvp / vjp of the arithmetic primitives against finite differences, with rank-0 and size-1
// broadcasting operands; transposes of the linear ones.
#include "ad_rules_check.h"

using namespace cjax;
using namespace cjax::adtest;

namespace {

struct Domain {
  double lo, hi;
  bool both_signs = false;
};

Arg arg(const Shape& s, Domain d) {
  Arg a = f64(s, d.lo, d.hi);
  a.both_signs = d.both_signs;
  return a;
}

// `prim` on two operands of random broadcast-compatible shapes.
void check_binary(std::string_view prim, Domain dx, Domain dy, Rng& rng, int shapes = 4,
                  Params params = {}) {
  for (int s = 0; s < shapes; ++s) {
    Shape out = random_shape(rng);
    std::vector<Arg> args{arg(broadcast_operand(rng, out), dx),
                          arg(broadcast_operand(rng, out), dy)};
    INFO(prim << " on " << args[0].aval.str_short() << ", " << args[1].aval.str_short());
    check_jvp_vjp(one_eqn(prim, args, params), args, rng);
  }
}

void check_unary(std::string_view prim, Domain d, Rng& rng, Params params = {}) {
  for (int s = 0; s < 2; ++s) {
    std::vector<Arg> args{arg(random_shape(rng), d)};
    INFO(prim << " on " << args[0].aval.str_short());
    check_jvp_vjp(one_eqn(prim, args, params), args, rng);
  }
}

}  // namespace

TEST_CASE("ad rules: add, sub, mul, div, add_any with broadcasting") {
  Rng rng(101);
  check_binary("add", {-2, 2}, {-2, 2}, rng);
  check_binary("sub", {-2, 2}, {-2, 2}, rng);
  check_binary("mul", {-2, 2}, {-2, 2}, rng, 4, {{"out_dtype", NoneParam{}}});
  check_binary("div", {-2, 2}, {0.5, 2, true}, rng);
  std::vector<Arg> same{f64({2, 3}), f64({2, 3})};
  check_jvp_vjp(one_eqn("add_any", same), same, rng);
  std::vector<Arg> one{f64({3, 2})};
  check_jvp_vjp(one_eqn("neg", one), one, rng);
}

TEST_CASE("ad rules: neg, add, sub, add_any are linear, mul and div in one operand") {
  Rng rng(102);
  for (int s = 0; s < 3; ++s) {
    Shape out = random_shape(rng);
    std::vector<Arg> args{f64(broadcast_operand(rng, out)), f64(broadcast_operand(rng, out))};
    INFO(args[0].aval.str_short() << ", " << args[1].aval.str_short());
    check_linear(one_eqn("add", args), args, {true, true}, rng);
    check_linear(one_eqn("sub", args), args, {true, true}, rng);
    check_linear(one_eqn("mul", args), args, {true, false}, rng);
    check_linear(one_eqn("mul", args), args, {false, true}, rng);
    std::vector<Arg> dargs{args[0], f64_pm(args[1].aval.shape, 0.5, 2)};
    check_linear(one_eqn("div", dargs), dargs, {true, false}, rng);
  }
  std::vector<Arg> one{f64({3, 2})};
  check_linear(one_eqn("neg", one), one, {true}, rng);
  std::vector<Arg> same{f64({2, 3}), f64({2, 3})};
  check_linear(one_eqn("add_any", same), same, {true, true}, rng);
}

TEST_CASE("ad rules: max and min, including ties") {
  Rng rng(103);
  check_binary("max", {-2, 2}, {-2, 2}, rng);
  check_binary("min", {-2, 2}, {-2, 2}, rng);
  // A tie splits the tangent evenly (JAX's _balanced_eq): d max(x, x) = (tx + ty) / 2.
  std::vector<Arg> args{f64({3}), f64({3})};
  Jaxpr f = one_eqn("max", args);
  JvpJaxpr jvp = jvp_jaxpr(f, {true, true}, true);
  Buffer x = from_doubles(args[0].aval, {1, 2, 3});
  Buffer tx = from_doubles(args[0].aval, {1, 1, 1}), ty = from_doubles(args[0].aval, {3, 5, -1});
  std::vector<Buffer> out = eval(jvp.jaxpr, {x, x, tx, ty});
  check_close(out[1], {2, 3, 0}, 1e-15, "tied max tangent");
}

TEST_CASE("ad rules: pow, integer_pow, rem, atan2") {
  Rng rng(104);
  check_binary("pow", {0.5, 2}, {-2, 2}, rng);
  for (int s = 0; s < 3; ++s) {
    Shape out = random_shape(rng);
    std::vector<Arg> args{f64(broadcast_operand(rng, out), 0.5, 2),
                          i32(broadcast_operand(rng, out), -3, 3)};
    INFO("pow with integer exponent " << args[1].aval.str_short());
    check_jvp_vjp(one_eqn("pow", args), args, rng);
  }
  for (int64_t y : {0, 1, 2, 3, -2, 5}) {
    INFO("integer_pow y=" << y);
    check_unary("integer_pow", {0.5, 1.5, true}, rng, lax_params::integer_pow(y));
  }
  check_binary("rem", {0.2, 1.2, true}, {1.5, 2.5, true}, rng);
  check_binary("atan2", {-2, 2}, {0.5, 2}, rng);
}

TEST_CASE("ad rules: abs, sign, square, sqrt, rsqrt, cbrt") {
  Rng rng(105);
  check_unary("abs", {0.1, 2, true}, rng);
  check_unary("sign", {0.1, 2, true}, rng);
  check_unary("square", {-2, 2}, rng);
  check_unary("sqrt", {0.5, 2}, rng, {{"accuracy", NoneParam{}}});
  check_unary("rsqrt", {0.5, 2}, rng, {{"accuracy", NoneParam{}}});
  check_unary("cbrt", {0.5, 2, true}, rng, {{"accuracy", NoneParam{}}});
}

TEST_CASE("ad rules: clamp, with array and scalar bounds") {
  Rng rng(106);
  for (int s = 0; s < 4; ++s) {
    Shape shape = random_nonscalar_shape(rng);
    Shape lo_shape = s % 2 ? shape : Shape{}, hi_shape = s / 2 ? shape : Shape{};
    std::vector<Arg> args{f64(lo_shape, -1, -0.2), f64(shape, -2, 2), f64(hi_shape, 0.2, 1)};
    INFO("clamp " << args[0].aval.str_short() << " " << args[1].aval.str_short() << " "
                  << args[2].aval.str_short());
    check_jvp_vjp(one_eqn("clamp", args), args, rng);
  }
}

TEST_CASE("ad rules: comparisons, logic and rounding have zero tangents") {
  Rng rng(107);
  std::vector<Arg> two{f64({2, 3}, -2, 2), f64({2, 3}, -2, 2)};
  for (const char* prim : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    Jaxpr f = one_eqn(prim, two);
    JvpJaxpr jvp = jvp_jaxpr(f, {true, true}, false);
    CHECK(jvp.out_nonzero == std::vector<bool>{false});
    check_jvp_vjp(f, two, rng, 1);
  }
  std::vector<Arg> one{f64({4}, 0.1, 2.9)};
  for (const char* prim : {"floor", "ceil", "sign", "is_finite"}) {
    Jaxpr f = one_eqn(prim, one);
    CHECK(jvp_jaxpr(f, {true}, false).out_nonzero == std::vector<bool>{false});
    check_jvp_vjp(f, one, rng, 1);
  }
  std::vector<Arg> mat{f64({3, 4})};
  for (const char* prim : {"argmax", "argmin"}) {
    Jaxpr am = one_eqn(prim, mat, lax_params::argminmax(1, DType::i32));
    CHECK(jvp_jaxpr(am, {true}, false).out_nonzero == std::vector<bool>{false});
    check_jvp_vjp(am, mat, rng, 1);
  }
  // A program that mixes a comparison into a float result: only the float path differentiates.
  std::vector<Arg> args{f64({5}, -2, 2)};
  Jaxpr g = make_jaxpr(args, [](JaxprBuilder& b, const std::vector<Atom>& in) {
    Atom positive = b.emit1("gt", {in[0], Literal::of(0.0, DType::f64)});
    Atom zeros = b.emit1("broadcast_in_dim", {Literal::of(0.0, DType::f64)},
                         lax_params::broadcast_in_dim({5}, {}));
    return std::vector<Atom>{b.emit1("select_n", {positive, zeros, in[0]})};
  });
  check_jvp_vjp(g, args, rng);
}
