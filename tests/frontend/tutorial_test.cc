// The tutorial's program: make_jaxpr prints exactly what JAX prints, and every eqn carries the
// user's source location.
#include <catch2/catch.hpp>

#include <string>

#include "cjax/api.h"
#include "tests/golden/golden.h"

using namespace cjax;

// In a namespace of its own, tests included: checkpoint_residuals_test.cc has a g, f and kDotLine
// of its own and may share a unity-build unit with this file, and neither may rename them (the
// eqns' source locations name g).
namespace tutorial_test {

// As in the tutorial: y = jnp.dot(W, x); return jnp.sin(y).
Array g(const Array& W, const Array& x) {
  Array y = np::dot(W, x);
  return np::sin(y);
}
constexpr uint32_t kDotLine = __LINE__ - 3;

Array f(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  return g(W3, g(W2, g(W1, x)));
}

TEST_CASE("make_jaxpr of the tutorial's f prints as JAX prints it") {
  Jaxpr j = make_jaxpr(f, {"W1", "W2", "W3", "x"}, "f")(
      ShapeDtype{DType::f32, {5, 4}}, ShapeDtype{DType::f32, {6, 5}},
      ShapeDtype{DType::f32, {7, 6}}, ShapeDtype{DType::f32, {4}});
  CHECK(to_string(j) == golden::text("tutorial_f.jaxpr"));
  REQUIRE(j.debug);
  CHECK(j.debug->function_name == "f");
  CHECK(j.debug->arg_names == std::vector<std::string>{"W1", "W2", "W3", "x"});
}

TEST_CASE("concrete arguments trace the same way as specs") {
  Array W1 = np::ones({5, 4}), W2 = np::ones({6, 5}), W3 = np::ones({7, 6}), x = np::ones({4});
  CHECK(to_string(make_jaxpr(f)(W1, W2, W3, x)) == golden::text("tutorial_f.jaxpr"));
  // Without names, arguments are named by their position.
  Jaxpr j = make_jaxpr(f)(W1, W2, W3, x);
  CHECK(j.debug->arg_names == std::vector<std::string>{"args[0]", "args[1]", "args[2]", "args[3]"});
}

TEST_CASE("eqns record the user's file, line, column and function") {
  Jaxpr j = make_jaxpr(f)(ShapeDtype{DType::f32, {5, 4}}, ShapeDtype{DType::f32, {6, 5}},
                          ShapeDtype{DType::f32, {7, 6}}, ShapeDtype{DType::f32, {4}});
  REQUIRE(j.eqns.size() == 6);
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    const SourceInfo& src = j.eqns[i].source;
    CHECK(display_file(src.file) == "tests/frontend/tutorial_test.cc");
    CHECK(src.line == kDotLine + (i % 2));  // dot_general, then sin on the next line
    CHECK(short_function_name(src.function) == "g");
  }
  // g++ reports the column of a call's opening parenthesis (JAX reports the 0-based start of the
  // call expression: 6 for `y = jnp.dot(W, x)`, 9 for `return jnp.sin(y)`).
  std::string dot_line = "  Array y = np::dot(W, x);", sin_line = "  return np::sin(y);";
  CHECK(j.eqns[0].source.column == dot_line.find('(') + 1);
  CHECK(j.eqns[1].source.column == sin_line.find('(') + 1);
  CHECK(j.eqns[1].source.summarize() ==
        "tests/frontend/tutorial_test.cc:" + std::to_string(kDotLine + 1) + ":" +
            std::to_string(sin_line.find('(') + 1) + " (g)");
}

}  // namespace tutorial_test
