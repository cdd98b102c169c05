// NumPy broadcasting as JAX 0.11 traces it: scalars are used directly, a lower-rank operand is
// rank-promoted with broadcast_in_dim, and size-1 dims are broadcast by the binary primitive.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::f32;
using cjax::testing::i32;

TEST_CASE("a scalar operand is used as is") {
  auto mul = [](const Array& a, const Array& b) { return a * b; };
  CHECK(to_string(make_jaxpr(mul)(f32({2, 3}), f32({}))) ==
        "{ lambda ; a:f32[2,3] b:f32[]. let c:f32[2,3] = mul a b in (c,) }");
  auto div = [](const Array& a) { return a / 128; };
  CHECK(to_string(make_jaxpr(div)(f32({2, 3}))) ==
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = div a 128.0:f32[] in (b,) }");
}

TEST_CASE("a lower-rank operand gets leading size-1 dims") {
  auto add = [](const Array& a, const Array& b) { return a + b; };
  CHECK(to_string(make_jaxpr(add)(f32({2, 3}), f32({3}))) ==
        R"({ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    d:f32[2,3] = add a c
  in (d,) })");
  // Both ways round, and size-1 dims left to the primitive.
  CHECK(to_string(make_jaxpr(add)(f32({4}), f32({3, 1}))) ==
        R"({ lambda ; a:f32[4] b:f32[3,1]. let
    c:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    d:f32[3,4] = add c b
  in (d,) })");
  CHECK(to_string(make_jaxpr(add)(f32({2, 3}), f32({2, 1}))) ==
        "{ lambda ; a:f32[2,3] b:f32[2,1]. let c:f32[2,3] = add a b in (c,) }");
}

TEST_CASE("broadcasting results evaluate correctly") {
  Array a = array({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  CHECK((a + array({10.f, 20.f, 30.f})).to_vector<double>() ==
        std::vector<double>{11, 22, 33, 14, 25, 36});
  CHECK((a * array({{2.f}, {3.f}})).to_vector<double>() ==
        std::vector<double>{2, 4, 6, 12, 15, 18});
  Array outer = array({1.f, 2.f}).reshape({2, 1}) + array({10.f, 20.f, 30.f});
  CHECK(outer.shape() == Shape{2, 3});
  CHECK(outer.to_vector<double>() == std::vector<double>{11, 21, 31, 12, 22, 32});
}

TEST_CASE("broadcast_to and incompatible shapes") {
  auto bt = [](const Array& a) { return np::broadcast_to(a, {2, 3}); };
  CHECK(to_string(make_jaxpr(bt)(f32({3}))) ==
        R"({ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
  in (b,) })");
  auto add = [](const Array& a, const Array& b) { return a + b; };
  CHECK_THROWS_WITH(make_jaxpr(add)(f32({2, 3}), f32({4})),
                    Catch::Contains("add: incompatible shapes for broadcasting: (2, 3), (4,)"));
  CHECK_THROWS_AS(make_jaxpr(add)(f32({3}), f32({4})), TypeError);
  CHECK_THROWS_AS(np::broadcast_to(np::ones({3}), {4}), TypeError);
}
