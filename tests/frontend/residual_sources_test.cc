// The residual report's other sources: a captured constant array, and a pytree argument.
#include <catch2/catch.hpp>

#include "cjax/api.h"

using namespace cjax;
namespace np = cjax::numpy;

TEST_CASE("a captured array that the backward pass reads is reported as a constant") {
  Array scale = array(std::vector<float>{1.f, 2.f, 3.f});  // concrete: a constvar when traced
  auto f = [scale](const Array& x) { return np::sum(np::sin(x * scale)); };
  auto res = saved_residuals(f, {"x"})(ShapeDtype{DType::f32, {3}});
  std::vector<std::string> lines;
  for (const auto& r : res)
    lines.push_back(r.aval.str_short() + " " +
                    r.description.substr(0, r.description.find(" from t")));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "f32[3] from a constant");  // d(x*scale)/dx = scale
  CHECK(lines[1] == "f32[3] output of cos");
}

TEST_CASE("pytree arguments are named by their key paths") {
  std::map<std::string, Array> params{{"w", Array(ShapeDtype{DType::f32, {3}})},
                                      {"b", Array(ShapeDtype{DType::f32, {3}})}};
  auto f = [](const std::map<std::string, Array>& p, const Array& x) {
    return np::sum(np::sin(p.at("w") * x + p.at("b")));
  };
  auto res = saved_residuals(f, {"params", "x"})(params, ShapeDtype{DType::f32, {3}});
  std::vector<std::string> descriptions;
  for (const auto& r : res)
    descriptions.push_back(r.description.substr(0, r.description.find(" from t")));
  // w is read (times the tangent of x), x is read (times the tangent of w), b is not.
  CHECK(descriptions[0] == "from the argument params['w']");
  CHECK(descriptions[1] == "from the argument x");
  CHECK(descriptions[2] == "output of cos");
}
