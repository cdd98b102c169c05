// jvp / vjp of the transcendental primitives against finite differences.
#include "ad_rules_check.h"

using namespace cjax;
using namespace cjax::adtest;

namespace {

Params acc() {
  return {{"accuracy", NoneParam{}}};
}

void check_unary(std::string_view prim, double lo, double hi, Rng& rng, Params params = {}) {
  for (int s = 0; s < 2; ++s) {
    std::vector<Arg> args{f64(random_shape(rng), lo, hi)};
    INFO(prim << " on " << args[0].aval.str_short());
    check_jvp_vjp(one_eqn(prim, args, params), args, rng);
  }
}

}  // namespace

TEST_CASE("ad rules: trigonometric and hyperbolic functions") {
  Rng rng(201);
  check_unary("sin", -3, 3, rng, acc());
  check_unary("cos", -3, 3, rng, acc());
  check_unary("tan", -1.2, 1.2, rng, acc());
  check_unary("asin", -0.8, 0.8, rng);
  check_unary("acos", -0.8, 0.8, rng);
  check_unary("atan", -3, 3, rng);
  check_unary("sinh", -2, 2, rng);
  check_unary("cosh", -2, 2, rng);
  check_unary("tanh", -2, 2, rng, acc());
  check_unary("asinh", -2, 2, rng);
  check_unary("acosh", 1.2, 3, rng);
  check_unary("atanh", -0.8, 0.8, rng);
}

TEST_CASE("ad rules: exponentials, logarithms, logistic, erf, erfc") {
  Rng rng(202);
  check_unary("exp", -2, 2, rng, acc());
  check_unary("exp2", -2, 2, rng, acc());
  check_unary("expm1", -2, 2, rng, acc());
  check_unary("log", 0.3, 3, rng, acc());
  check_unary("log1p", -0.5, 3, rng, acc());
  check_unary("logistic", -3, 3, rng, acc());
  check_unary("erf", -2, 2, rng);
  check_unary("erfc", -2, 2, rng);
}

// The interpreter has no digamma or erf_inv kernel yet: these check the programs, and the
// numbers once the kernels exist.
TEST_CASE("ad rules: lgamma and erf_inv") {
  Rng rng(205);
  std::vector<Arg> args{f64({2}, 0.5, 0.9)};
  Jaxpr lg = one_eqn("lgamma", args);
  CHECK(program(jvp_jaxpr(lg, {true}, false).jaxpr) ==
        "{ lambda ; a:f64[2] b:f64[2]. let\n"
        "    c:f64[2] = lgamma a\n"
        "    d:f64[2] = digamma a\n"
        "    e:f64[2] = mul b d\n"
        "  in (c, e) }");
  if (runtime::has_kernel("digamma")) check_jvp_vjp(lg, args, rng);
  Jaxpr ei = one_eqn("erf_inv", args);
  CHECK(program(jvp_jaxpr(ei, {true}, false).jaxpr) ==
        "{ lambda ; a:f64[2] b:f64[2]. let\n"
        "    c:f64[2] = erf_inv a\n"
        "    d:f64[2] = square c\n"
        "    e:f64[2] = exp d\n"
        "    f:f64[2] = mul b e\n"
        "    g:f64[2] = mul 0.8862269254527579:f64[] f\n"
        "  in (c, g) }");
  if (runtime::has_kernel("erf_inv")) check_jvp_vjp(ei, args, rng);
}

TEST_CASE("ad rules: AccuracyMode.HIGHEST selects JAX's alternative tanh/logistic/expm1 forms") {
  Rng rng(203);
  Params highest{{"accuracy", OpaqueParam{"AccuracyMode.HIGHEST"}}};
  for (const char* prim : {"tanh", "logistic", "expm1"}) {
    std::vector<Arg> args{f64({3}, -2, 2)};
    Jaxpr f = one_eqn(prim, args, highest);
    JvpJaxpr jvp = jvp_jaxpr(f, {true}, false);
    std::string text = program(jvp.jaxpr);
    INFO(text);
    CHECK(text.find(std::string_view(prim) == "expm1"
                        ? "exp[accuracy=AccuracyMode.HIGHEST]"
                        : "logistic[accuracy=AccuracyMode.HIGHEST]") != std::string::npos);
    check_jvp_vjp(f, args, rng);
  }
}

TEST_CASE("ad rules: atan2 with broadcasting operands") {
  Rng rng(204);
  for (int s = 0; s < 4; ++s) {
    Shape out = random_shape(rng);
    std::vector<Arg> args{f64(broadcast_operand(rng, out), -2, 2),
                          f64(broadcast_operand(rng, out), 0.5, 2)};
    check_jvp_vjp(one_eqn("atan2", args), args, rng);
  }
}

TEST_CASE("ad rules: sin's jvp passes the eqn's accuracy to cos") {
  std::vector<Arg> args{f64({2})};
  Jaxpr f = one_eqn("sin", args, {{"accuracy", OpaqueParam{"AccuracyMode.HIGHEST"}}});
  JvpJaxpr jvp = jvp_jaxpr(f, {true}, false);
  CHECK(program(jvp.jaxpr) ==
        "{ lambda ; a:f64[2] b:f64[2]. let\n"
        "    c:f64[2] = sin[accuracy=AccuracyMode.HIGHEST] a\n"
        "    d:f64[2] = cos[accuracy=AccuracyMode.HIGHEST] a\n"
        "    e:f64[2] = mul b d\n"
        "  in (c, e) }");
}
