#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

namespace {
Params bcast(Shape shape, std::vector<int64_t> dims) {
  return {{"shape", ParamValue::ints(shape)},
          {"broadcast_dimensions", ParamValue::ints(dims)},
          {"sharding", NoneParam{}}};
}
}  // namespace

TEST_CASE("broadcast_in_dim") {
  // wild-jaxprs/14: g:f32[2,32,4,1] = broadcast_in_dim[broadcast_dimensions=(0, 1, 2)] f
  CHECK(
      infer1("broadcast_in_dim", {f32({2, 32, 4})}, bcast({2, 32, 4, 1}, {0, 1, 2})).str_short() ==
      "f32[2,32,4,1]");
  // wild-jaxprs/14: l:f32[1,1,1,128] = broadcast_in_dim[broadcast_dimensions=(3,)] b
  CHECK(infer1("broadcast_in_dim", {f32({128})}, bcast({1, 1, 1, 128}, {3})).str_short() ==
        "f32[1,1,1,128]");
  CHECK(infer1("broadcast_in_dim", {f32({}, true)}, bcast({3}, {})).weak_type);
  CHECK(infer1("broadcast_in_dim", {f32({1})}, bcast({5, 4}, {1})).str_short() == "f32[5,4]");
  CHECK(infer_error("broadcast_in_dim", {f32({3})}, bcast({4}, {0})) ==
        "broadcast_in_dim: operand dimension 0 cannot broadcast to shape (4,) with "
        "broadcast_dimensions (0,) (got f32[3])");
  CHECK(infer_error("broadcast_in_dim", {f32({3})}, bcast({3}, {})) ==
        "broadcast_in_dim: broadcast_dimensions () must have one entry per operand dimension "
        "(got f32[3])");
  CHECK(infer_error("broadcast_in_dim", {f32({3})}, bcast({3}, {1})) ==
        "broadcast_in_dim: broadcast_dimensions (1,) out of range for shape (3,) (got f32[3])");
  CHECK(infer_error("broadcast_in_dim", {f32({1, 1})}, bcast({3, 3}, {0, 0})) ==
        "broadcast_in_dim: broadcast_dimensions (0, 0) has duplicates (got f32[1,1])");
  CHECK(infer_error("broadcast_in_dim", {f32({3})},
                    {{"broadcast_dimensions", ParamValue::ints({0})}}) ==
        "broadcast_in_dim: missing param 'shape'");
}

TEST_CASE("reshape") {
  Params p{{"new_sizes", ParamValue::ints({1, 10})},
           {"dimensions", NoneParam{}},
           {"sharding", NoneParam{}}};
  CHECK(infer1("reshape", {f32({10})}, p).str_short() == "f32[1,10]");
  CHECK(infer1("reshape", {f32({2, 5})},
               {{"new_sizes", ParamValue::ints({5, 2})}, {"dimensions", ParamValue::ints({1, 0})}})
            .str_short() == "f32[5,2]");
  CHECK(infer_error("reshape", {f32({3, 3})}, p) ==
        "reshape: new_sizes (1, 10) has 10 elements but the operand has 9 (got f32[3,3])");
  CHECK(infer_error(
            "reshape", {f32({2, 5})},
            {{"new_sizes", ParamValue::ints({10})}, {"dimensions", ParamValue::ints({0, 0})}}) ==
        "reshape: dimensions (0, 0) is not a permutation of the operand's dimensions "
        "(got f32[2,5])");
}

TEST_CASE("transpose") {
  CHECK(
      infer1("transpose", {f32({2, 8})}, {{"permutation", ParamValue::ints({1, 0})}}).str_short() ==
      "f32[8,2]");
  CHECK(infer1("transpose", {f32({2, 3, 4})}, {{"permutation", ParamValue::ints({1, 2, 0})}})
            .str_short() == "f32[3,4,2]");
  CHECK(infer_error("transpose", {f32({2, 8})}, {{"permutation", ParamValue::ints({0})}}) ==
        "transpose: permutation (0,) is not a permutation of the operand's dimensions "
        "(got f32[2,8])");
}

TEST_CASE("squeeze and expand_dims") {
  // wild-jaxprs/05: c:f32[] = squeeze[dimensions=(0,)] b  with b:f32[1]
  CHECK(infer1("squeeze", {f32({1})}, {{"dimensions", ParamValue::ints({0})}}).str_short() ==
        "f32[]");
  CHECK(
      infer1("squeeze", {f32({1, 3, 1})}, {{"dimensions", ParamValue::ints({2, 0})}}).str_short() ==
      "f32[3]");
  CHECK(infer_error("squeeze", {f32({2})}, {{"dimensions", ParamValue::ints({0})}}) ==
        "squeeze: cannot squeeze dimension 0 of size 2 (got f32[2])");
  CHECK(infer_error("squeeze", {f32({1})}, {{"dimensions", ParamValue::ints({1})}}) ==
        "squeeze: dimension 1 out of range for rank 1 (got f32[1])");
  CHECK(infer1("expand_dims", {f32({3, 4})}, {{"dimensions", ParamValue::ints({0, 2})}})
            .str_short() == "f32[1,3,1,4]");
  CHECK(infer_error("expand_dims", {f32({3})}, {{"dimensions", ParamValue::ints({2})}}) ==
        "expand_dims: dimension 2 out of range for rank 2 (got f32[3])");
}

TEST_CASE("concatenate") {
  // wild-jaxprs/13: be:i32[10] = concatenate[dimension=0] l n p r t v x z bb bd (each i32[1])
  std::vector<ShapedArray> ten(10, i32({1}));
  CHECK(infer1("concatenate", ten, {{"dimension", 0}}).str_short() == "i32[10]");
  // wild-jaxprs/14: x:f32[2,32,4,128] = concatenate[dimension=3] t w
  CHECK(infer1("concatenate", {f32({2, 32, 4, 64}), f32({2, 32, 4, 64})}, {{"dimension", 3}})
            .str_short() == "f32[2,32,4,128]");
  CHECK(infer_error("concatenate", {f32({2, 3}), f32({3, 3})}, {{"dimension", 1}}) ==
        "concatenate: operand shapes differ outside dimension 1 (got f32[2,3], f32[3,3])");
  CHECK(infer_error("concatenate", {f32({2}), i32({3})}, {{"dimension", 0}}) ==
        "concatenate: operands must have the same dtype (got f32[2], i32[3])");
  CHECK(infer_error("concatenate", {f32({2}), f32({2, 1})}, {{"dimension", 0}}) ==
        "concatenate: operands must have the same number of dimensions (got f32[2], f32[2,1])");
  CHECK(infer_error("concatenate", {}, {{"dimension", 0}}) ==
        "concatenate: expects at least 1 operand, got 0 (got )");
}

TEST_CASE("pad") {
  auto config = [](std::vector<std::vector<int64_t>> rows) {
    ParamTuple t;
    for (const auto& r : rows) t.items.push_back(ParamValue::ints(r));
    return Params{{"padding_config", ParamValue(std::move(t))}};
  };
  CHECK(infer1("pad", {f32({3, 4}), f32({})}, config({{1, 2, 0}, {0, 0, 1}})).str_short() ==
        "f32[6,7]");
  CHECK(infer1("pad", {f32({5}), f32({})}, config({{-1, -2, 0}})).str_short() == "f32[2]");
  CHECK(infer1("pad", {f32({0}), f32({})}, config({{1, 1, 3}})).str_short() == "f32[2]");
  CHECK(infer_error("pad", {f32({3}), f32({})}, config({{0, 0, -1}})) ==
        "pad: interior padding must be non-negative (got f32[3], f32[])");
  CHECK(infer_error("pad", {f32({3}), f32({})}, config({{-4, 0, 0}})) ==
        "pad: dimension 0 would have the negative size -1 (got f32[3], f32[])");
  CHECK(infer_error("pad", {f32({3}), f32({1})}, config({{0, 0, 0}})) ==
        "pad: the padding value must be a scalar (got f32[3], f32[1])");
  CHECK(infer_error("pad", {f32({3}), i32({})}, config({{0, 0, 0}})) ==
        "pad: the operand and the padding value must have the same dtype (got f32[3], i32[])");
  CHECK(infer_error("pad", {f32({3}), f32({})}, config({{0, 0}})) ==
        "pad: param 'padding_config' is not a tuple of (low, high, interior)");
}

TEST_CASE("iota") {
  // wild-jaxprs/30: cr:i32[1,2] = iota[dimension=1 dtype=int32 shape=(1, 2)]
  Params p{{"dimension", 1},
           {"dtype", DType::i32},
           {"shape", ParamValue::ints({1, 2})},
           {"sharding", NoneParam{}}};
  CHECK(infer1("iota", {}, p).str_short() == "i32[1,2]");
  CHECK_FALSE(infer1("iota", {}, p).weak_type);
  p.set("dimension", 2);
  CHECK(infer_error("iota", {}, p) == "iota: dimension 2 out of range for shape (1, 2)");
  p.set("dimension", 0);
  p.set("dtype", DType::bool_);
  CHECK(infer_error("iota", {}, p) == "iota: does not accept dtype bool");
  CHECK(infer_error("iota", {f32({})}, p) == "iota: expects 0 operands, got 1 (got f32[])");
}
