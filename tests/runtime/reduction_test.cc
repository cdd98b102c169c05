#include <cmath>
#include <limits>

#include "ir/errors.h"
#include "jaxpr_builder.h"
#include "runtime_test_util.h"

using namespace cjax;
using namespace cjax::runtime;
using namespace cjax::runtime::testing;

namespace {
const float kNaNf = std::numeric_limits<float>::quiet_NaN();
Params axes(std::vector<int64_t> a) {
  return {{"axes", ParamValue::ints(a)}, {"out_sharding", NoneParam{}}};
}
}  // namespace

TEST_CASE("reduce_sum / max / min / prod over axes") {
  Buffer x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(vals(apply1("reduce_sum", axes({1}), {x}, f32a({2}))) == std::vector<double>{6, 15});
  CHECK(vals(apply1("reduce_sum", axes({0}), {x}, f32a({3}))) == std::vector<double>{5, 7, 9});
  CHECK(vals(apply1("reduce_sum", axes({0, 1}), {x}, f32a({}))) == std::vector<double>{21});
  CHECK(vals(apply1("reduce_sum", axes({}), {x}, f32a({2, 3}))) ==
        std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(vals(apply1("reduce_max", axes({1}), {x}, f32a({2}))) == std::vector<double>{3, 6});
  CHECK(vals(apply1("reduce_min", axes({0}), {x}, f32a({3}))) == std::vector<double>{1, 2, 3});
  CHECK(vals(apply1("reduce_prod", axes({1}), {x}, f32a({2}))) == std::vector<double>{6, 120});
  // Integers, bools and the empty reduction's identity.
  CHECK(vals(apply1("reduce_sum", axes({0}), {i32({3}, {1, -5, 7})},
                    ShapedArray(DType::i32, {}))) == std::vector<double>{3});
  CHECK(vals(apply1("reduce_max", axes({0}), {boolean({3}, {false, true, false})},
                    ShapedArray(DType::bool_, {}))) == std::vector<double>{1});
  CHECK(vals(apply1("reduce_or", axes({0}), {boolean({2}, {false, false})},
                    ShapedArray(DType::bool_, {}))) == std::vector<double>{0});
  CHECK(vals(apply1("reduce_and", axes({0}), {boolean({2}, {true, true})},
                    ShapedArray(DType::bool_, {}))) == std::vector<double>{1});
  Buffer empty = Buffer::zeros(f32a({0, 2}));
  CHECK(vals(apply1("reduce_sum", axes({0}), {empty}, f32a({2}))) == std::vector<double>{0, 0});
  CHECK(vals(apply1("reduce_max", axes({0}), {empty}, f32a({2})))[0] ==
        -std::numeric_limits<double>::infinity());
  // A NaN propagates through max.
  CHECK(
      std::isnan(apply1("reduce_max", axes({0}), {f32({3}, {1, kNaNf, 2})}, f32a({})).element(0)));
  CHECK_THROWS_AS(apply1("reduce_sum", axes({1}), {x}, f32a({3})), TypeError);
}

TEST_CASE("reduce_sum on f64 and i64") {
  CHECK(apply1("reduce_sum", axes({0}), {f64({3}, {0.1, 0.2, 0.3})}, ShapedArray(DType::f64, {}))
            .element(0) == 0.1 + 0.2 + 0.3);
  const int64_t big = int64_t{1} << 60;
  CHECK(apply1("reduce_sum", axes({0}), {i64({2}, {big, 3})}, ShapedArray(DType::i64, {}))
            .as<int64_t>()[0] == big + 3);
}

TEST_CASE("argmax / argmin: first index of the extreme, NaN wins") {
  Params p{{"axes", ParamValue::ints({1})}, {"index_dtype", DType::i32}};
  Buffer x = f32({2, 4}, {1, 5, 5, 2, 3, kNaNf, 7, kNaNf});
  CHECK(vals(apply1("argmax", p, {x}, ShapedArray(DType::i32, {2}))) == std::vector<double>{1, 1});
  CHECK(vals(apply1("argmin", p, {x}, ShapedArray(DType::i32, {2}))) == std::vector<double>{0, 1});
  Params p0{{"axes", ParamValue::ints({0})}, {"index_dtype", DType::i64}};
  Buffer y = i32({3, 2}, {4, 1, 9, 1, 9, 0});
  CHECK(vals(apply1("argmax", p0, {y}, ShapedArray(DType::i64, {2}))) == std::vector<double>{1, 0});
  CHECK(vals(apply1("argmin", p0, {y}, ShapedArray(DType::i64, {2}))) == std::vector<double>{0, 2});
  Params two{{"axes", ParamValue::ints({0, 1})}, {"index_dtype", DType::i32}};
  CHECK_THROWS_AS(apply1("argmax", two, {x}, ShapedArray(DType::i32, {})), TypeError);
}

TEST_CASE("cumulative reductions, forward and reverse") {
  Buffer x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto cum = [&](const char* op, int64_t axis, bool reverse) {
    return vals(apply1(op, {{"axis", axis}, {"reverse", reverse}}, {x}, f32a({2, 3})));
  };
  CHECK(cum("cumsum", 1, false) == std::vector<double>{1, 3, 6, 4, 9, 15});
  CHECK(cum("cumsum", 1, true) == std::vector<double>{6, 5, 3, 15, 11, 6});
  CHECK(cum("cumsum", 0, false) == std::vector<double>{1, 2, 3, 5, 7, 9});
  CHECK(cum("cumprod", 1, false) == std::vector<double>{1, 2, 6, 4, 20, 120});
  CHECK(cum("cumprod", 0, true) == std::vector<double>{4, 10, 18, 4, 5, 6});
  Buffer y = i32({5}, {3, 1, 4, 1, 5});
  CHECK(vals(apply1("cummax", {{"axis", 0}, {"reverse", false}}, {y},
                    ShapedArray(DType::i32, {5}))) == std::vector<double>{3, 3, 4, 4, 5});
  CHECK(vals(apply1("cummax", {{"axis", 0}, {"reverse", true}}, {y},
                    ShapedArray(DType::i32, {5}))) == std::vector<double>{5, 5, 5, 5, 5});
  CHECK(vals(apply1("cummin", {{"axis", 0}, {"reverse", false}}, {y},
                    ShapedArray(DType::i32, {5}))) == std::vector<double>{3, 1, 1, 1, 1});
  std::vector<double> lse = vals(
      apply1("cumlogsumexp", {{"axis", 0}, {"reverse", false}}, {f32({2}, {0, 0})}, f32a({2})));
  CHECK(close(lse, {0, std::log(2.0)}));
}

TEST_CASE("dot_general: matmul, vector dot and batch dimensions") {
  auto dn = [](std::vector<int64_t> lc, std::vector<int64_t> rc, std::vector<int64_t> lb,
               std::vector<int64_t> rb) {
    return Params{{"dimension_numbers", DotDimensionNumbers{lc, rc, lb, rb}.to_param()},
                  {"precision", NoneParam{}},
                  {"preferred_element_type", DType::f32}};
  };
  Buffer a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Buffer b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  CHECK(vals(apply1("dot_general", dn({1}, {0}, {}, {}), {a, b}, f32a({2, 2}))) ==
        std::vector<double>{58, 64, 139, 154});
  // Contracting the lhs's first dimension: a^T b' with b' = a.
  CHECK(vals(apply1("dot_general", dn({0}, {0}, {}, {}), {a, a}, f32a({3, 3}))) ==
        std::vector<double>{17, 22, 27, 22, 29, 36, 27, 36, 45});
  // Matrix-vector and vector-vector.
  Buffer v = f32({3}, {1, 0, -1});
  CHECK(vals(apply1("dot_general", dn({1}, {0}, {}, {}), {a, v}, f32a({2}))) ==
        std::vector<double>{-2, -2});
  CHECK(vals(apply1("dot_general", dn({0}, {0}, {}, {}), {v, v}, f32a({}))) ==
        std::vector<double>{2});
  // Outer product: no contraction.
  CHECK(vals(apply1("dot_general", dn({}, {}, {}, {}), {f32({2}, {1, 2}), f32({2}, {3, 4})},
                    f32a({2, 2}))) == std::vector<double>{3, 4, 6, 8});
  // Batch: [2,1,2] x [2,2,1] over batch 0 -> [2,1,1]; batch dims come first in the output.
  Buffer l = f32({2, 1, 2}, {1, 2, 3, 4});
  Buffer r = f32({2, 2, 1}, {5, 6, 7, 8});
  CHECK(vals(apply1("dot_general", dn({2}, {1}, {0}, {0}), {l, r}, f32a({2, 1, 1}))) ==
        std::vector<double>{17, 53});
  // Batch dimension not leading on the rhs: r2[k, b] with batch dim 1.
  Buffer r2 = f32({2, 2}, {5, 7, 6, 8});  // r2[k][b] = r[b][k][0]
  CHECK(vals(apply1("dot_general", dn({2}, {0}, {0}, {1}), {l, r2}, f32a({2, 1}))) ==
        std::vector<double>{17, 53});
  CHECK_THROWS_AS(apply1("dot_general", dn({1}, {1}, {}, {}), {a, b}, f32a({2, 3})), TypeError);
}

TEST_CASE("dot_general in integers and with a preferred element type") {
  Params p{{"dimension_numbers", DotDimensionNumbers{{1}, {0}, {}, {}}.to_param()},
           {"precision", NoneParam{}},
           {"preferred_element_type", DType::i32}};
  Buffer a = make<int8_t>(DType::i8, {1, 2}, {100, 100});
  Buffer b = make<int8_t>(DType::i8, {2, 1}, {100, 100});
  CHECK(vals(apply1("dot_general", p, {a, b}, ShapedArray(DType::i32, {1, 1}))) ==
        std::vector<double>{20000});
  p.set("preferred_element_type", DType::f64);
  Buffer x = f32({1, 2}, {0.5f, 0.25f});
  CHECK(vals(apply1("dot_general", p, {x, f32({2, 1}, {2, 4})}, ShapedArray(DType::f64, {1, 1}))) ==
        std::vector<double>{2});
}
