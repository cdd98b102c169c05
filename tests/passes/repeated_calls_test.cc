// passes/repeated_calls.h: which call bodies a program runs at several places, and
// prepare_for_lowering keeping those calls (with one shared body) for the CPU back end.
#include <catch2/catch.hpp>

#include <string>

#include "cjax/api.h"
#include "ir/call_body.h"
#include "passes/inline.h"
#include "passes/pipeline.h"
#include "passes/repeated_calls.h"

namespace cjax {
namespace repeated_calls_test {
namespace {

namespace np = cjax::numpy;

// A body of 2 * rounds eqns.
Array rounds_of(const Array& x, int rounds) {
  Array y = x;
  for (int i = 0; i < rounds; ++i) y = np::sin(y) * 1.5;
  return y;
}

std::vector<const Eqn*> remat_eqns(const Jaxpr& j) {
  std::vector<const Eqn*> out;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == "remat2") out.push_back(&e);
  return out;
}

const ShapeDtype kVector{DType::f32, {8}};

TEST_CASE(
    "repeated calls: a big body called twice is repeated, not one called once or a small one") {
  auto big = checkpoint([](const Array& x) { return rounds_of(x, 15); });
  auto small = checkpoint([](const Array& x) { return rounds_of(x, 2); });
  auto other = checkpoint([](const Array& x) { return rounds_of(x, 16); });
  const Jaxpr j =
      make_jaxpr([&](const Array& x) { return other(small(small(big(big(x))))); })(kVector);
  std::vector<const Eqn*> calls = remat_eqns(j);
  REQUIRE(calls.size() == 5);
  RepeatedCalls repeated(j);
  CHECK(repeated.size() == 1);
  const std::string* first = repeated.key(*calls[0]);
  REQUIRE(first != nullptr);
  CHECK(repeated.key(*calls[1]) == first);    // two traces of one function: the same text
  CHECK(repeated.key(*calls[2]) == nullptr);  // 4 eqns
  CHECK(repeated.key(*calls[3]) == nullptr);
  CHECK(repeated.key(*calls[4]) == nullptr);  // called once
  // With a lower bound of 4 eqns, the small body repeats too.
  RepeatedCalls any_size(j, 4);
  CHECK(any_size.size() == 2);
  CHECK(any_size.key(*calls[2]) == any_size.key(*calls[3]));
}

TEST_CASE("repeated calls: the calls inside a repeated body count once") {
  auto inner = checkpoint([](const Array& x) { return rounds_of(x, 15); });
  auto outer = checkpoint([&](const Array& x) { return inner(np::cos(x)); });
  const Jaxpr j = make_jaxpr([&](const Array& x) { return outer(outer(x)); })(kVector);
  RepeatedCalls repeated(j);
  CHECK(repeated.size() == 1);  // outer; inner runs once per outer, compiled within it
  std::vector<const Eqn*> calls = remat_eqns(j);
  REQUIRE(calls.size() == 2);
  CHECK(repeated.key(*calls[0]) != nullptr);
  CHECK(repeated.key(*remat_eqns(*call_body(*calls[0])).at(0)) == nullptr);
}

TEST_CASE("prepare_for_lowering keeps repeated calls, sharing one expanded body, when asked") {
  auto inner = checkpoint([](const Array& x) { return rounds_of(x, 4); });
  auto body = checkpoint([&](const Array& x) { return inner(rounds_of(x, 12)); });
  const Jaxpr j = make_jaxpr([&](const Array& x) { return body(body(x)); })(kVector);
  CHECK(remat_eqns(prepare_for_lowering(j)).empty());
  const Jaxpr kept = prepare_for_lowering(j, {.keep_repeated_calls = true});
  std::vector<const Eqn*> calls = remat_eqns(kept);
  REQUIRE(calls.size() == 2);
  CHECK(call_body(*calls[0]) == call_body(*calls[1]));  // expanded once
  CHECK(remat_eqns(*call_body(*calls[0])).empty());     // the inner call, not repeated, expanded
  CHECK(call_body(*calls[0])->eqns.size() == 32);
}

}  // namespace
}  // namespace repeated_calls_test
}  // namespace cjax
