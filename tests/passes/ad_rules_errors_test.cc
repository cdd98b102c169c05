// Where JAX cannot differentiate or transpose, cjax throws UnsupportedError naming the op and the
// eqn's source location.
#include <source_location>

#include "ir/errors.h"

#include "ad_rules_check.h"

using namespace cjax;
using namespace cjax::adtest;

namespace {

// A one-eqn jaxpr whose eqn carries this file's location.
Jaxpr located(std::string_view prim, const std::vector<Arg>& args, Params params = {}) {
  return make_jaxpr(args, [&](JaxprBuilder& b, const std::vector<Atom>& in) {
    b.set_source(SourceInfo(std::source_location::current()));
    std::vector<Var> outs = b.emit(prim, in, params);
    return std::vector<Atom>(outs.begin(), outs.end());
  });
}

}  // namespace

TEST_CASE("ad rules: nextafter and digamma have no jvp, as in JAX") {
  std::vector<Arg> two{f64({2}), f64({2})};
  CHECK_THROWS_WITH(jvp_jaxpr(located("nextafter", two), {true, true}, false),
                    Catch::Contains("'nextafter'") && Catch::Contains("ad_rules_errors_test.cc"));
  std::vector<Arg> one{f64({2}, 1, 2)};
  CHECK_THROWS_AS(jvp_jaxpr(located("digamma", one), {true}, false), UnsupportedError);
  CHECK_THROWS_WITH(vjp_jaxpr(located("digamma", one)),
                    Catch::Contains("'digamma'") && Catch::Contains("polygamma") &&
                        Catch::Contains("ad_rules_errors_test.cc"));
  // A zero tangent never reaches the rule.
  CHECK_NOTHROW(jvp_jaxpr(located("digamma", one), {false}, false));
}

TEST_CASE("ad rules: transposing a non-linear use throws") {
  std::vector<Arg> two{f64({2}), f64({2})};
  CHECK_THROWS_WITH(transpose_jaxpr(located("mul", two), {true, true}),
                    Catch::Contains("mul") && Catch::Contains("ad_rules_errors_test.cc"));
  CHECK_THROWS_WITH(transpose_jaxpr(located("div", two), {false, true}),
                    Catch::Contains("div") && Catch::Contains("divisor"));
  std::vector<Arg> mat{f64({2, 3}), f64({3, 2})};
  CHECK_THROWS_AS(transpose_jaxpr(located("dot_general", mat,
                                          lax_params::dot_general({{1}, {0}, {}, {}}, NoneParam{})),
                                  {true, true}),
                  UnsupportedError);
  std::vector<Arg> sel{pred({2}), f64({2}), f64({2})};
  CHECK_THROWS_WITH(transpose_jaxpr(located("select_n", sel), {true, true, true}),
                    Catch::Contains("select_n") && Catch::Contains("predicate"));
  std::vector<Arg> ds{f64({4}), i32({}, 0, 2)};
  CHECK_THROWS_WITH(
      transpose_jaxpr(located("dynamic_slice", ds, lax_params::dynamic_slice({2})), {true, true}),
      Catch::Contains("dynamic_slice") && Catch::Contains("start indices"));
}
