// Trace-time errors name the op, the shapes and the caller's file:line:column.
#include <catch2/catch.hpp>

#include <string>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::f32;
using cjax::testing::i32;

namespace {

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a dot of mismatched shapes names dot_general, the shapes and the caller") {
  auto bad = [](const Array& W, const Array& x) { return np::dot(W, x); };
  const int at = __LINE__ - 1;
  std::string msg = message_of([&] { make_jaxpr(bad)(f32({5, 4}), f32({3})); });
  INFO(msg);
  // The column is that of `np::dot(`'s opening parenthesis.
  std::string line = "  auto bad = [](const Array& W, const Array& x) { return np::dot(W, x); };";
  std::string where = "tests/frontend/errors_test.cc:" + std::to_string(at) + ":" +
                      std::to_string(line.find("np::dot(") + 8) + ": ";
  CHECK(msg.rfind(where + "dot_general: ", 0) == 0);
  CHECK(msg.find("f32[5,4]") != std::string::npos);
  CHECK(msg.find("f32[3]") != std::string::npos);
  CHECK_THROWS_AS(make_jaxpr(bad)(f32({5, 4}), f32({3})), TypeError);
  // Eagerly too.
  CHECK_THROWS_AS(np::dot(np::ones({5, 4}), np::ones({3})), TypeError);
}

TEST_CASE("errors of composite ops point at the user's line") {
  auto bad = [](const Array& x) { return np::reshape(x, {7}); };
  const int at = __LINE__ - 1;
  std::string msg = message_of([&] { make_jaxpr(bad)(f32({2, 3})); });
  CHECK(msg.find("tests/frontend/errors_test.cc:" + std::to_string(at) + ":") == 0);
  CHECK(msg.find("reshape: cannot reshape array of shape (2, 3) (size 6) into shape (7,)") !=
        std::string::npos);
  auto op = [](const Array& a, const Array& b) { return a * b; };
  const int op_at = __LINE__ - 1;
  std::string msg2 = message_of([&] { make_jaxpr(op)(f32({3}), f32({4})); });
  INFO(msg2);
  CHECK(msg2.find("tests/frontend/errors_test.cc:" + std::to_string(op_at) + ":") == 0);
  CHECK(msg2.find("mul: ") != std::string::npos);
  CHECK(msg2.find("f32[3]") != std::string::npos);
  CHECK(msg2.find("f32[4]") != std::string::npos);
  std::string msg3 = message_of([&] { np::sum(np::ones({2}), 3); });
  CHECK(msg3.find("sum: axis 3 is out of bounds for an array of rank 1") != std::string::npos);
}

TEST_CASE("values of tracers and abstract arrays cannot be read") {
  auto peek = [](const Array& x) {
    (void)x.item();
    return x;
  };
  CHECK_THROWS_WITH(make_jaxpr(peek)(f32({})),
                    Catch::Contains("cannot read the value of a traced Array (f32[])"));
  Array spec = ShapeDtype{DType::f32, {2}};
  CHECK(spec.is_abstract());
  CHECK_THROWS_WITH(spec.item(), Catch::Contains("abstract Array"));
  CHECK_THROWS_WITH(np::sin(spec), Catch::Contains("abstract Array (f32[2]) has no value"));
  CHECK(spec.to_string() == "ShapeDtype(f32[2])");
}

TEST_CASE("a C++ if on a traced value names the caller, the op that made it and what to use") {
  // An Array does not convert to bool (`if (x > 0.0)` does not compile); reading its value does,
  // and fails while tracing.
  auto relu = [](const Array& x) {
    Array positive = x > 0.0;
    if (positive.item<bool>()) return x;
    return -x;
  };
  const int at = __LINE__ - 3;
  std::string msg = message_of([&] { make_jaxpr(relu)(f32({})); });
  INFO(msg);
  CHECK(msg.rfind("tests/frontend/errors_test.cc:" + std::to_string(at) + ":", 0) == 0);
  CHECK(msg.find(": cannot read the value of a traced Array (bool[]) (in make_jaxpr or a "
                 "transformation); it is the output of gt at tests/frontend/errors_test.cc:" +
                 std::to_string(at - 1) + ":") != std::string::npos);
  CHECK(msg.find("(errors_test.cc") == std::string::npos);  // positions, not bare file names
  CHECK(msg.find("choose between values with np::where or cjax::cond") != std::string::npos);
  CHECK_THROWS_AS(make_jaxpr(relu)(f32({})), TypeError);
  // A traced argument; to_vector too; under grad as under make_jaxpr.
  auto peek = [](const Array& x) { return x.to_vector<float>()[0] > 0 ? x : -x; };
  const int peek_at = __LINE__ - 1;
  msg = message_of([&] { make_jaxpr(peek)(f32({2})); });
  CHECK(msg.rfind("tests/frontend/errors_test.cc:" + std::to_string(peek_at) + ":", 0) == 0);
  CHECK(msg.find("it is an argument of the traced function") != std::string::npos);
  auto scalar_peek = [](const Array& x) { return x.item() > 0 ? np::sin(x) : x; };
  msg = message_of([&] { grad(scalar_peek)(Array(1.0)); });
  CHECK(msg.find("cannot read the value of a traced Array (f32[])") != std::string::npos);
  // np::where says the same without leaving the trace.
  auto relu_where = [](const Array& x) { return np::where(x > 0.0, x, -x); };
  CHECK_NOTHROW(make_jaxpr(relu_where)(f32({})));
}

TEST_CASE("a tracer used after its trace ended is an escaped tracer") {
  Array leaked;
  auto keep = [&](const Array& x) {
    leaked = x * 2;
    return x;
  };
  make_jaxpr(keep)(f32({}));
  CHECK(leaked.is_tracer());
  CHECK(leaked.to_string() == "Traced<f32[]>");
  CHECK_THROWS_WITH(np::sin(leaked), Catch::Contains("escaped tracer"));
  CHECK_THROWS_WITH(make_jaxpr([&](const Array& y) { return y + leaked; })(f32({})),
                    Catch::Contains("escaped tracer"));
  // A failed trace leaves no frame behind.
  CHECK_THROWS(make_jaxpr([](const Array& y) { return np::dot(y, y); })(f32({2, 3})));
  CHECK_FALSE(is_tracing());
}

TEST_CASE("tracing keeps every array within the rank and size limits of ir/limits.h") {
  using Catch::Matchers::Contains;
  const Shape ones65(65, 1);
  const std::string rank = "rank 65 exceeds the limit of 64 dimensions";
  // A shape rule whose result would be too high a rank: broadcast_in_dim, reshape, expand_dims.
  auto broadcast = [&](const Array& x) { return np::broadcast_to(x, ones65); };
  CHECK_THAT(message_of([&] { make_jaxpr(broadcast)(f32({})); }),
             Contains("broadcast_in_dim: " + rank));
  auto reshape = [&](const Array& x) { return np::reshape(x, ones65); };
  CHECK_THAT(message_of([&] { make_jaxpr(reshape)(f32({})); }), Contains("reshape: " + rank));
  auto expand = [](const Array& x) { return np::expand_dims(x, {0}); };
  CHECK_THAT(message_of([&] { make_jaxpr(expand)(f32(Shape(64, 1))); }), Contains(rank));
  CHECK_THROWS_AS(make_jaxpr(expand)(f32(Shape(64, 1))), TypeError);
  CHECK_NOTHROW(make_jaxpr(expand)(f32(Shape(63, 1))));
  // Eagerly too.
  CHECK_THAT(message_of([&] { np::ones(ones65); }), Contains(rank));
  // Sizes that overflow int64, from the rule's params or from a reshape's arithmetic.
  auto huge = [](const Array& x) {
    return np::broadcast_to(x, {10000000000, 10000000000, 10000000000});
  };
  CHECK_THAT(message_of([&] { make_jaxpr(huge)(f32({})); }), Contains("too many elements"));
  auto huge_reshape = [](const Array& x) {
    return np::reshape(x, {10000000000, 10000000000, 10000000000});
  };
  CHECK_THAT(message_of([&] { make_jaxpr(huge_reshape)(f32({})); }),
             Contains("reshape: the size of shape (10000000000, 10000000000, 10000000000) "
                      "overflows int64"));
  // The specs a trace starts from.
  auto id = [](const Array& x) { return x; };
  CHECK_THAT(message_of([&] { make_jaxpr(id)(f32(ones65)); }), Contains("argument spec: " + rank));
}
