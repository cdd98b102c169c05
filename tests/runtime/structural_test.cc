#include "ir/errors.h"
#include "jaxpr_builder.h"
#include "runtime_test_util.h"

using namespace cjax;
using namespace cjax::runtime;
using namespace cjax::runtime::testing;

namespace {
Buffer iota6() {
  return f32({2, 3}, {0, 1, 2, 3, 4, 5});
}
}  // namespace

TEST_CASE("broadcast_in_dim") {
  Buffer v = f32({3}, {1, 2, 3});
  Params rows{{"shape", ParamValue::ints({2, 3})},
              {"broadcast_dimensions", ParamValue::ints({1})},
              {"sharding", NoneParam{}}};
  CHECK(vals(apply1("broadcast_in_dim", rows, {v}, f32a({2, 3}))) ==
        std::vector<double>{1, 2, 3, 1, 2, 3});
  Params cols{{"shape", ParamValue::ints({3, 2})}, {"broadcast_dimensions", ParamValue::ints({0})}};
  CHECK(vals(apply1("broadcast_in_dim", cols, {v}, f32a({3, 2}))) ==
        std::vector<double>{1, 1, 2, 2, 3, 3});
  // A size-1 operand dimension repeats.
  Buffer c = f32({2, 1}, {7, 8});
  Params rep{{"shape", ParamValue::ints({2, 3})},
             {"broadcast_dimensions", ParamValue::ints({0, 1})}};
  CHECK(vals(apply1("broadcast_in_dim", rep, {c}, f32a({2, 3}))) ==
        std::vector<double>{7, 7, 7, 8, 8, 8});
  // A scalar, with the params absent (the bare printed form).
  CHECK(vals(apply1("broadcast_in_dim", {}, {f32_scalar(1.5f)}, f32a({2, 2}))) ==
        std::vector<double>{1.5, 1.5, 1.5, 1.5});
  // Any dtype moves: bool and 16-bit floats.
  CHECK(vals(apply1("broadcast_in_dim", cols, {boolean({3}, {true, false, true})},
                    ShapedArray(DType::bool_, {3, 2}))) == std::vector<double>{1, 1, 0, 0, 1, 1});
  Buffer h = Buffer::full(ShapedArray(DType::f16, {}), 2.5);
  CHECK(vals(apply1("broadcast_in_dim", {{"broadcast_dimensions", ParamValue::ints({})}}, {h},
                    ShapedArray(DType::f16, {2}))) == std::vector<double>{2.5, 2.5});
  CHECK_THROWS_AS(apply1("broadcast_in_dim", rows, {f32({2}, {1, 2})}, f32a({2, 3})), TypeError);
  CHECK_THROWS_WITH(apply1("broadcast_in_dim", rows, {v}, f32a({4, 3})),
                    Catch::Contains("shape=(2, 3)") && Catch::Contains("f32[4,3]"));
}

TEST_CASE("reshape, squeeze, expand_dims keep row-major order") {
  Buffer x = iota6();
  Params p{{"new_sizes", ParamValue::ints({3, 2})}, {"dimensions", NoneParam{}}};
  Buffer r = apply1("reshape", p, {x}, f32a({3, 2}));
  CHECK(r.aval().str_short() == "f32[3,2]");
  CHECK(vals(r) == std::vector<double>{0, 1, 2, 3, 4, 5});
  // The old form with `dimensions` transposes first.
  Params pt{{"new_sizes", ParamValue::ints({6})}, {"dimensions", ParamValue::ints({1, 0})}};
  CHECK(vals(apply1("reshape", pt, {x}, f32a({6}))) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK_THROWS_AS(apply1("reshape", p, {x}, f32a({4})), TypeError);

  Buffer s = apply1("squeeze", {{"dimensions", ParamValue::ints({0, 2})}},
                    {f32({1, 3, 1}, {1, 2, 3})}, f32a({3}));
  CHECK(vals(s) == std::vector<double>{1, 2, 3});
  CHECK_THROWS_AS(apply1("squeeze", {{"dimensions", ParamValue::ints({0})}}, {x}, f32a({6})),
                  TypeError);
  Buffer e = apply1("expand_dims", {{"dimensions", ParamValue::ints({0})}}, {f32({2}, {1, 2})},
                    f32a({1, 2}));
  CHECK(e.aval().str_short() == "f32[1,2]");
}

TEST_CASE("transpose") {
  Buffer x = iota6();
  CHECK(vals(apply1("transpose", {{"permutation", ParamValue::ints({1, 0})}}, {x}, f32a({3, 2}))) ==
        std::vector<double>{0, 3, 1, 4, 2, 5});
  std::vector<int32_t> d(24);
  for (int i = 0; i < 24; ++i) d[static_cast<size_t>(i)] = i;
  Buffer t = i32({2, 3, 4}, d);
  Buffer y = apply1("transpose", {{"permutation", ParamValue::ints({2, 0, 1})}}, {t},
                    ShapedArray(DType::i32, {4, 2, 3}));
  // y[k, i, j] = t[i, j, k] = 12 i + 4 j + k.
  std::vector<double> yv = vals(y);
  CHECK(yv[0] == 0);
  CHECK(yv[1] == 4);    // (k=0, i=0, j=1)
  CHECK(yv[3] == 12);   // (k=0, i=1, j=0)
  CHECK(yv[6] == 1);    // (k=1, i=0, j=0)
  CHECK(yv[23] == 23);  // (k=3, i=1, j=2)
  CHECK_THROWS_AS(
      apply1("transpose", {{"permutation", ParamValue::ints({0, 0})}}, {x}, f32a({2, 3})),
      TypeError);
}

TEST_CASE("concatenate and split") {
  Buffer a = f32({2, 1}, {1, 2});
  Buffer b = f32({2, 2}, {3, 4, 5, 6});
  Buffer c = apply1("concatenate", {{"dimension", 1}}, {a, b}, f32a({2, 3}));
  CHECK(vals(c) == std::vector<double>{1, 3, 4, 2, 5, 6});
  Buffer r = apply1("concatenate", {{"dimension", 0}}, {b, f32({1, 2}, {7, 8})}, f32a({3, 2}));
  CHECK(vals(r) == std::vector<double>{3, 4, 5, 6, 7, 8});
  CHECK_THROWS_AS(apply1("concatenate", {{"dimension", 0}}, {a, b}, f32a({4, 1})), TypeError);
  std::vector<Buffer> parts = apply("split", {{"sizes", ParamValue::ints({1, 2})}, {"axis", 1}},
                                    {c}, {f32a({2, 1}), f32a({2, 2})});
  CHECK(vals(parts[0]) == std::vector<double>{1, 2});
  CHECK(vals(parts[1]) == std::vector<double>{3, 4, 5, 6});
}

TEST_CASE("slice with and without strides") {
  std::vector<float> d(20);
  for (int i = 0; i < 20; ++i) d[static_cast<size_t>(i)] = static_cast<float>(i);
  Buffer x = f32({4, 5}, d);
  Params p{{"start_indices", ParamValue::ints({1, 1})},
           {"limit_indices", ParamValue::ints({3, 4})},
           {"strides", NoneParam{}}};
  CHECK(vals(apply1("slice", p, {x}, f32a({2, 3}))) == std::vector<double>{6, 7, 8, 11, 12, 13});
  Params ps{{"start_indices", ParamValue::ints({0, 0})},
            {"limit_indices", ParamValue::ints({4, 5})},
            {"strides", ParamValue::ints({2, 2})}};
  CHECK(vals(apply1("slice", ps, {x}, f32a({2, 3}))) == std::vector<double>{0, 2, 4, 10, 12, 14});
  Params bad{{"start_indices", ParamValue::ints({0, 0})},
             {"limit_indices", ParamValue::ints({5, 5})},
             {"strides", NoneParam{}}};
  CHECK_THROWS_AS(apply1("slice", bad, {x}, f32a({5, 5})), TypeError);
}

TEST_CASE("dynamic_slice clamps start indices into range") {
  Buffer x = f32({5}, {0, 1, 2, 3, 4});
  Params p{{"slice_sizes", ParamValue::ints({2})}};
  CHECK(vals(apply1("dynamic_slice", p, {x, i32_scalar(1)}, f32a({2}))) ==
        std::vector<double>{1, 2});
  CHECK(vals(apply1("dynamic_slice", p, {x, i32_scalar(4)}, f32a({2}))) ==
        std::vector<double>{3, 4});  // 4 -> 3
  CHECK(vals(apply1("dynamic_slice", p, {x, i32_scalar(-7)}, f32a({2}))) ==
        std::vector<double>{0, 1});  // -7 -> 0
  Buffer m = iota6();
  Params p2{{"slice_sizes", ParamValue::ints({1, 2})}};
  CHECK(vals(apply1("dynamic_slice", p2, {m, i64({}, {1}), i64({}, {5})}, f32a({1, 2}))) ==
        std::vector<double>{4, 5});
  CHECK_THROWS_AS(apply1("dynamic_slice", p2, {m, i32_scalar(0)}, f32a({1, 2})), TypeError);
}

TEST_CASE("dynamic_update_slice clamps start indices into range") {
  Buffer x = f32({5}, {0, 1, 2, 3, 4});
  Buffer u = f32({2}, {-1, -2});
  CHECK(vals(apply1("dynamic_update_slice", {}, {x, u, i32_scalar(1)}, f32a({5}))) ==
        std::vector<double>{0, -1, -2, 3, 4});
  CHECK(vals(apply1("dynamic_update_slice", {}, {x, u, i32_scalar(10)}, f32a({5}))) ==
        std::vector<double>{0, 1, 2, -1, -2});
  CHECK(vals(x) == std::vector<double>{0, 1, 2, 3, 4});  // the operand is untouched
  Buffer m = Buffer::zeros(f32a({3, 3}));
  Buffer blk = f32({2, 2}, {1, 2, 3, 4});
  CHECK(vals(apply1("dynamic_update_slice", {}, {m, blk, i32_scalar(1), i32_scalar(-1)},
                    f32a({3, 3}))) == std::vector<double>{0, 0, 0, 1, 2, 0, 3, 4, 0});
}

TEST_CASE("iota along a dimension, in several dtypes") {
  Params p{{"dtype", DType::i32},
           {"shape", ParamValue::ints({2, 3})},
           {"dimension", 1},
           {"sharding", NoneParam{}}};
  CHECK(vals(apply1("iota", p, {}, ShapedArray(DType::i32, {2, 3}))) ==
        std::vector<double>{0, 1, 2, 0, 1, 2});
  p.set("dimension", 0);
  CHECK(vals(apply1("iota", p, {}, ShapedArray(DType::f32, {2, 3}))) ==
        std::vector<double>{0, 0, 0, 1, 1, 1});
  p.set("shape", ParamValue::ints({4}));
  CHECK(vals(apply1("iota", p, {}, ShapedArray(DType::u8, {4}))) ==
        std::vector<double>{0, 1, 2, 3});
  CHECK_THROWS_AS(apply1("iota", p, {}, ShapedArray(DType::u8, {5})), TypeError);
}

TEST_CASE("pad with low, high, interior and negative padding") {
  Buffer x = f32({3}, {1, 2, 3});
  auto cfg = [](std::vector<std::vector<int64_t>> dims) {
    ParamTuple t;
    for (auto& d : dims) t.items.push_back(ParamValue::ints(d));
    return Params{{"padding_config", ParamValue(t)}};
  };
  CHECK(vals(apply1("pad", cfg({{1, 2, 0}}), {x, f32_scalar(0)}, f32a({6}))) ==
        std::vector<double>{0, 1, 2, 3, 0, 0});
  CHECK(vals(apply1("pad", cfg({{0, 0, 1}}), {x, f32_scalar(-1)}, f32a({5}))) ==
        std::vector<double>{1, -1, 2, -1, 3});
  CHECK(vals(apply1("pad", cfg({{-1, 1, 0}}), {x, f32_scalar(9)}, f32a({3}))) ==
        std::vector<double>{2, 3, 9});
  CHECK(vals(apply1("pad", cfg({{-1, -1, 1}}), {x, f32_scalar(0)}, f32a({3}))) ==
        std::vector<double>{0, 2, 0});
  Buffer m = f32({2, 2}, {1, 2, 3, 4});
  CHECK(vals(apply1("pad", cfg({{1, 0, 0}, {0, 1, 0}}), {m, f32_scalar(0)}, f32a({3, 3}))) ==
        std::vector<double>{0, 0, 0, 1, 2, 0, 3, 4, 0});
  CHECK_THROWS_AS(apply1("pad", cfg({{1, 2, 0}}), {x, f32_scalar(0)}, f32a({5})), TypeError);
}

TEST_CASE("rev reverses listed dimensions") {
  Buffer x = iota6();
  CHECK(vals(apply1("rev", {{"dimensions", ParamValue::ints({1})}}, {x}, f32a({2, 3}))) ==
        std::vector<double>{2, 1, 0, 5, 4, 3});
  CHECK(vals(apply1("rev", {{"dimensions", ParamValue::ints({0, 1})}}, {x}, f32a({2, 3}))) ==
        std::vector<double>{5, 4, 3, 2, 1, 0});
}
