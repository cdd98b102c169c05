// Source locations recorded on eqns: named functions report their call's line and the column of
// the opening parenthesis; operators (through cjax::Operand) report the line and column of the
// last token of the right operand (g++ 12); composite ops put the user's location on every eqn.
#include <catch2/catch.hpp>

#include <string>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::f32;
using cjax::testing::i32;

namespace {

// 1-based column of the first occurrence of `what` in `line`, plus `offset`.
uint32_t col(const std::string& line, const std::string& what, size_t offset = 0) {
  return static_cast<uint32_t>(line.find(what) + 1 + offset);
}

Array ops(const Array& a, const Array& b) {
  Array c = a * b;  // OPS_LINE_1
  Array d = -c;
  return d + 2.0;
}
constexpr int kOpsLine = __LINE__ - 5;

}  // namespace

TEST_CASE("operators record the location of their right operand") {
  Jaxpr j = make_jaxpr(ops)(f32({3}), f32({3}));
  REQUIRE(j.eqns.size() == 3);
  const SourceInfo& mul = j.eqns[0].source;
  CHECK(display_file(mul.file) == "tests/frontend/source_location_test.cc");
  CHECK(mul.line == kOpsLine + 1);
  CHECK(mul.column == col("  Array c = a * b;  // OPS_LINE_1", "b;"));
  CHECK(short_function_name(mul.function) == "ops");
  CHECK(j.eqns[1].source.line == kOpsLine + 2);
  CHECK(j.eqns[1].source.column == col("  Array d = -c;", "c;"));
  CHECK(j.eqns[2].source.line == kOpsLine + 3);
  CHECK(j.eqns[2].source.column == col("  return d + 2.0;", "2.0"));
  CHECK(j.eqns[2].source.summarize() ==
        "tests/frontend/source_location_test.cc:" + std::to_string(kOpsLine + 3) + ":" +
            std::to_string(col("  return d + 2.0;", "2.0")) + " (ops)");
}

TEST_CASE("named functions record the column of their opening parenthesis") {
  auto f = [](const Array& x) { return np::exp(x); };
  const int line = __LINE__ - 1;
  Jaxpr j = make_jaxpr(f)(f32({3}));
  REQUIRE(j.eqns.size() == 1);
  CHECK(j.eqns[0].source.line == static_cast<uint32_t>(line));
  CHECK(j.eqns[0].source.column ==
        col("  auto f = [](const Array& x) { return np::exp(x); };", "np::exp(", 7));
  CHECK(short_function_name(j.eqns[0].source.function).ends_with("::<lambda>"));
}

TEST_CASE("every eqn of a composite op points at the user's call") {
  auto f = [](const Array& x) { return nn::gelu(x); };
  const int line = __LINE__ - 1;
  Jaxpr j = make_jaxpr(f)(f32({3}));
  REQUIRE(j.eqns.size() == 8);
  for (const Eqn& e : j.eqns) {
    CHECK(e.source.line == static_cast<uint32_t>(line));
    CHECK(display_file(e.source.file) == "tests/frontend/source_location_test.cc");
  }
  auto m = [](const Array& x) { return np::mean(x, 0, true); };
  const int mline = __LINE__ - 1;
  Jaxpr jm = make_jaxpr(m)(f32({4, 2}));
  REQUIRE(jm.eqns.size() == 3);
  for (const Eqn& e : jm.eqns) CHECK(e.source.line == static_cast<uint32_t>(mline));
  // Indexing records the location of the subscript expression.
  auto ix = [](const Array& x) { return x[1]; };
  const int iline = __LINE__ - 1;
  Jaxpr ji = make_jaxpr(ix)(f32({4}));
  REQUIRE(ji.eqns.size() == 2);
  CHECK(ji.eqns[0].source.line == static_cast<uint32_t>(iline));
}
