#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

namespace {
Params slice_params(std::vector<int64_t> start, std::vector<int64_t> limit,
                    ParamValue strides = NoneParam{}) {
  return {{"start_indices", ParamValue::ints(start)},
          {"limit_indices", ParamValue::ints(limit)},
          {"strides", std::move(strides)}};
}
}  // namespace

TEST_CASE("slice") {
  // wild-jaxprs/05: b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
  CHECK(infer1("slice", {f32({3})}, slice_params({0}, {1})).str_short() == "f32[1]");
  // wild-jaxprs/14
  CHECK(infer1("slice", {f32({2, 32, 4, 128})}, slice_params({0, 0, 0, 64}, {2, 32, 4, 128}))
            .str_short() == "f32[2,32,4,64]");
  CHECK(infer1("slice", {f32({10})}, slice_params({0}, {10}, ParamValue::ints({3}))).str_short() ==
        "f32[4]");
  CHECK(infer1("slice", {f32({10})}, slice_params({2}, {2}, ParamValue::ints({3}))).str_short() ==
        "f32[0]");
  CHECK(infer_error("slice", {f32({3})}, slice_params({0}, {4})) ==
        "slice: start_indices (0,) and limit_indices (4,) out of bounds (got f32[3])");
  CHECK(infer_error("slice", {f32({3})}, slice_params({2}, {1})) ==
        "slice: start_indices (2,) and limit_indices (1,) out of bounds (got f32[3])");
  CHECK(infer_error("slice", {f32({3, 3})}, slice_params({0}, {1})) ==
        "slice: start_indices (0,) and limit_indices (1,) must have one entry per operand "
        "dimension (got f32[3,3])");
  CHECK(infer_error("slice", {f32({3})}, slice_params({0}, {3}, ParamValue::ints({0}))) ==
        "slice: strides (0,) must be positive (got f32[3])");
}

TEST_CASE("dynamic_slice") {
  Params p{{"slice_sizes", ParamValue::ints({2, 3})}};
  CHECK(infer1("dynamic_slice", {f32({5, 3}), i32({}), i32({})}, p).str_short() == "f32[2,3]");
  CHECK(infer_error("dynamic_slice", {f32({5, 3}), i32({})}, p) ==
        "dynamic_slice: expects 2 start indices, one per operand dimension, got 1 "
        "(got f32[5,3], i32[])");
  CHECK(infer_error("dynamic_slice", {f32({5, 3}), i32({}), f32({})}, p) ==
        "dynamic_slice: start indices must be integers of one dtype (got f32[5,3], i32[], f32[])");
  CHECK(infer_error("dynamic_slice", {f32({5, 3}), i32({1}), i32({1})}, p) ==
        "dynamic_slice: start indices must be scalars (got f32[5,3], i32[1], i32[1])");
  CHECK(infer_error("dynamic_slice", {f32({5, 2}), i32({}), i32({})}, p) ==
        "dynamic_slice: slice_sizes (2, 3) out of bounds (got f32[5,2], i32[], i32[])");
}

TEST_CASE("dynamic_update_slice") {
  CHECK(infer1("dynamic_update_slice", {f32({5, 3}), f32({2, 3}), i32({}), i32({})}).str_short() ==
        "f32[5,3]");
  CHECK(infer_error("dynamic_update_slice", {f32({5, 3}), f32({6, 3}), i32({}), i32({})}) ==
        "dynamic_update_slice: the update must not be larger than the operand "
        "(got f32[5,3], f32[6,3], i32[], i32[])");
  CHECK(infer_error("dynamic_update_slice", {f32({5, 3}), f32({3}), i32({}), i32({})}) ==
        "dynamic_update_slice: the update must have the operand's rank "
        "(got f32[5,3], f32[3], i32[], i32[])");
  CHECK(infer_error("dynamic_update_slice", {f32({5}), i32({2}), i32({})}) ==
        "dynamic_update_slice: the operand and the update must have the same dtype "
        "(got f32[5], i32[2], i32[])");
}

TEST_CASE("reductions over axes") {
  Params p{{"axes", ParamValue::ints({0})}, {"out_sharding", NoneParam{}}};
  // wild-jaxprs/01: d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c  with c:f32[3]
  CHECK(infer1("reduce_sum", {f32({3})}, p).str_short() == "f32[]");
  CHECK(infer1("reduce_sum", {f32({4, 2})}, {{"axes", ParamValue::ints({0, 1})}}).str_short() ==
        "f32[]");
  CHECK(infer1("reduce_max", {f32({128, 2})}, {{"axes", ParamValue::ints({1})}}).str_short() ==
        "f32[128]");
  CHECK(infer1("reduce_min", {boolean({2, 3})}, p).str_short() == "bool[3]");
  CHECK(infer1("reduce_prod", {i32({2, 3})}, {{"axes", ParamValue::ints({1})}}).str_short() ==
        "i32[2]");
  for (const char* name : {"reduce_and", "reduce_or", "reduce_xor"})
    CHECK(infer1(name, {boolean({2, 3})}, p).str_short() == "bool[3]");
  CHECK(infer_error("reduce_sum", {boolean({3})}, p) ==
        "reduce_sum: does not accept dtype bool (got bool[3])");
  CHECK(infer_error("reduce_sum", {f32({3})}, {{"axes", ParamValue::ints({1})}}) ==
        "reduce_sum: axis 1 out of range for rank 1 (got f32[3])");
  CHECK(infer_error("reduce_max", {f32({3, 3})}, {{"axes", ParamValue::ints({1, 1})}}) ==
        "reduce_max: axes (1, 1) has duplicates (got f32[3,3])");
  CHECK(infer_error("reduce_and", {f32({3})}, p) ==
        "reduce_and: does not accept dtype f32 (got f32[3])");
}

TEST_CASE("argmax and argmin") {
  Params p{{"axes", ParamValue::ints({1})}, {"index_dtype", DType::i32}};
  for (const char* name : {"argmax", "argmin"}) {
    INFO(name);
    ShapedArray out = infer1(name, {f32({128, 2}, true)}, p);
    CHECK(out.str_short() == "i32[128]");
    CHECK_FALSE(out.weak_type);
    CHECK(infer_error(name, {f32({3, 2})},
                      {{"axes", ParamValue::ints({0, 1})}, {"index_dtype", DType::i32}}) ==
          std::string(name) + ": expects one axis, got (0, 1) (got f32[3,2])");
    CHECK(infer_error(name, {f32({3, 0})}, p) ==
          std::string(name) + ": the reduced dimension must not be empty (got f32[3,0])");
    CHECK(infer_error(name, {f32({3, 2})},
                      {{"axes", ParamValue::ints({1})}, {"index_dtype", DType::f32}}) ==
          std::string(name) + ": index_dtype must be an integer type, got float32");
  }
}

TEST_CASE("cumulative reductions") {
  Params p{{"axis", 1}, {"reverse", false}};
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"}) {
    INFO(name);
    CHECK(infer1(name, {f32({2, 5})}, p).str_short() == "f32[2,5]");
    CHECK(infer_error(name, {f32({2})}, p) ==
          std::string(name) + ": axis 1 out of range for rank 1 (got f32[2])");
  }
  CHECK(infer1("cumsum", {i32({4})}, {{"axis", 0}, {"reverse", true}}).str_short() == "i32[4]");
  CHECK(infer_error("cumsum", {boolean({4})}, {{"axis", 0}, {"reverse", true}}) ==
        "cumsum: does not accept dtype bool (got bool[4])");
  CHECK(infer_error("cumsum", {f32({4})}, {{"axis", 0}}) == "cumsum: missing param 'reverse'");
}

TEST_CASE("dot_general") {
  auto dn = [](DotDimensionNumbers d) {
    return Params{{"dimension_numbers", d.to_param()},
                  {"precision", NoneParam{}},
                  {"preferred_element_type", NoneParam{}},
                  {"out_sharding", NoneParam{}}};
  };
  // wild-jaxprs/11: d:f32[5] = dot_general[(([1], [0]), ([], [])) float32] a c
  Params p = dn({{1}, {0}, {}, {}});
  p.set("preferred_element_type", DType::f32);
  CHECK(infer1("dot_general", {f32({5, 10}), f32({10})}, p).str_short() == "f32[5]");
  // wild-jaxprs/15: e:f32[2,8] = dot_general[(([0], [0]), ([], []))] d a  (d f32[4,2], a f32[4,8])
  CHECK(infer1("dot_general", {f32({4, 2}), f32({4, 8})}, dn({{0}, {0}, {}, {}})).str_short() ==
        "f32[2,8]");
  // batch dims come first, then lhs free, then rhs free
  CHECK(infer1("dot_general", {f32({7, 3, 2, 4}), f32({2, 4, 5})}, dn({{3}, {1}, {2}, {0}}))
            .str_short() == "f32[2,7,3,5]");
  CHECK(infer1("dot_general", {bf16({2, 3}), f32({3})}, dn({{1}, {0}, {}, {}})).str_short() ==
        "f32[2]");
  Params pref = dn({{1}, {0}, {}, {}});
  pref.set("preferred_element_type", DType::f32);
  CHECK(infer1("dot_general", {bf16({2, 3}), bf16({3})}, pref).str_short() == "f32[2]");
  pref.set("preferred_element_type", DType::i32);
  CHECK(infer_error("dot_general", {bf16({2, 3}), bf16({3})}, pref) ==
        "dot_general: preferred_element_type int32 must be floating for floating operands "
        "(got bf16[2,3], bf16[3])");
  CHECK(infer_error("dot_general", {f32({5, 10}), f32({9})}, dn({{1}, {0}, {}, {}})) ==
        "dot_general: contracting dimensions have different sizes (10,) and (9,) "
        "(got f32[5,10], f32[9])");
  CHECK(infer_error("dot_general", {f32({2, 3, 4}), f32({3, 4, 5})}, dn({{2}, {1}, {0}, {0}})) ==
        "dot_general: batch dimensions have different sizes (2,) and (3,) "
        "(got f32[2,3,4], f32[3,4,5])");
  CHECK(infer_error("dot_general", {f32({2, 3}), f32({3})}, dn({{2}, {0}, {}, {}})) ==
        "dot_general: lhs dimension numbers (2,) and () out of range for rank 2 "
        "(got f32[2,3], f32[3])");
  CHECK(infer_error("dot_general", {f32({3, 3}), f32({3, 3})}, dn({{0}, {0}, {0}, {1}})) ==
        "dot_general: lhs contracting dimensions (0,) and batch dimensions (0,) must be distinct "
        "(got f32[3,3], f32[3,3])");
  // Mixed operand dtypes give the "higher" one, as in JAX's dtype rule.
  CHECK(infer1("dot_general", {f32({3}), i32({3})}, dn({{0}, {0}, {}, {}})).str_short() == "f32[]");
  CHECK(infer1("dot_general", {i32({3}), u32({3})}, dn({{0}, {0}, {}, {}})).str_short() == "i32[]");
  CHECK(infer_error("dot_general", {f32({3}), f32({3})}, {{"dimension_numbers", "oops"}}) ==
        "dot_general: dimension_numbers must be ((lhs_contract, rhs_contract), "
        "(lhs_batch, rhs_batch))");
}
