#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

TEST_CASE("float unary ops keep the operand's type and reject integers") {
  for (const char* name : {"sin",   "cos",     "tan",    "tanh",    "exp",   "exp2",     "log",
                           "log1p", "expm1",   "sqrt",   "rsqrt",   "cbrt",  "logistic", "erf",
                           "erfc",  "erf_inv", "lgamma", "digamma", "floor", "ceil",     "asin",
                           "acos",  "atan",    "sinh",   "cosh",    "asinh", "acosh",    "atanh"}) {
    INFO(name);
    CHECK(infer_str(name, {f32({5, 4})}) == std::vector<std::string>{"f32[5,4]"});
    CHECK(infer1(name, {f32({}, true)}).weak_type);
    CHECK(infer_error(name, {i32({3})}) ==
          std::string(name) + ": does not accept dtype i32 (got i32[3])");
    CHECK(infer_error(name, {f32({3}), f32({3})}) ==
          std::string(name) + ": expects 1 operand, got 2 (got f32[3], f32[3])");
  }
}

TEST_CASE("numeric unary ops accept ints but not bools") {
  for (const char* name : {"neg", "sign", "square"}) {
    INFO(name);
    CHECK(infer_str(name, {i32({2})}) == std::vector<std::string>{"i32[2]"});
    CHECK(infer_str(name, {f64({})}) == std::vector<std::string>{"f64[]"});
    CHECK(infer_error(name, {boolean({2})}) ==
          std::string(name) + ": does not accept dtype bool (got bool[2])");
  }
}

TEST_CASE("abs, not and is_finite have their own dtype classes") {
  CHECK(infer1("abs", {i32({3})}).str_short() == "i32[3]");
  CHECK(infer_error("abs", {u32({3})}) == "abs: does not accept dtype u32 (got u32[3])");
  CHECK(infer1("not", {boolean({3})}).str_short() == "bool[3]");
  CHECK(infer1("not", {u32({})}).str_short() == "u32[]");
  CHECK(infer_error("not", {f32({})}) == "not: does not accept dtype f32 (got f32[])");
  CHECK(infer1("is_finite", {f32({2, 2})}).str_short() == "bool[2,2]");
  CHECK(infer_error("is_finite", {i32({})}) == "is_finite: does not accept dtype i32 (got i32[])");
}

TEST_CASE("the accuracy param of transcendental ops does not change the type") {
  CHECK(infer1("sin", {f32({3})}, {{"accuracy", NoneParam{}}}).str_short() == "f32[3]");
}

TEST_CASE("integer_pow") {
  CHECK(infer1("integer_pow", {f32({1})}, {{"y", 2}}).str_short() == "f32[1]");
  CHECK(infer1("integer_pow", {i32({})}, {{"y", 3}}).str_short() == "i32[]");
  CHECK(infer1("integer_pow", {f32({})}, {{"y", -2}}).str_short() == "f32[]");
  CHECK(infer_error("integer_pow", {i32({2})}, {{"y", -1}}) ==
        "integer_pow: integers cannot be raised to the negative power -1 (got i32[2])");
  CHECK(infer_error("integer_pow", {f32({2})}) == "integer_pow: missing param 'y'");
  CHECK(infer_error("integer_pow", {f32({2})}, {{"y", 2.0}}) ==
        "integer_pow: param 'y' is not an int");
}

TEST_CASE("reduce_precision") {
  Params p{{"exponent_bits", 8}, {"mantissa_bits", 23}};
  CHECK(infer1("reduce_precision", {f32({5})}, p).str_short() == "f32[5]");
  CHECK(infer_error("reduce_precision", {i32({5})}, p) ==
        "reduce_precision: does not accept dtype i32 (got i32[5])");
  CHECK(infer_error("reduce_precision", {f32({5})}, {{"exponent_bits", 0}, {"mantissa_bits", 2}}) ==
        "reduce_precision: exponent_bits must be positive, got 0");
}

TEST_CASE("binary ops broadcast size-1 dimensions and scalars") {
  // wild-jaxprs/14: `mul a j` with a f32[2,32,4,128] and j f32[2,32,4,1]
  CHECK(infer1("mul", {f32({2, 32, 4, 128}), f32({2, 32, 4, 1})}).str_short() == "f32[2,32,4,128]");
  // wild-jaxprs/10: `mul e d` with e f32[] and d f32[1]
  CHECK(infer1("mul", {f32({}), f32({1})}).str_short() == "f32[1]");
  CHECK(infer1("add", {f32({1, 3}), f32({4, 1})}).str_short() == "f32[4,3]");
  CHECK(infer1("sub", {f32({3}), f32({})}).str_short() == "f32[3]");
  CHECK(infer1("div", {f32({}), f32({})}).str_short() == "f32[]");
  CHECK(infer_error("add", {f32({3}), f32({4})}) == "add: incompatible shapes f32[3] and f32[4]");
  CHECK(infer_error("add", {f32({3}), f32({2, 3})}) ==
        "add: incompatible shapes f32[3] and f32[2,3]");
  CHECK(infer_error("mul", {f32({3}), i32({3})}) == "mul: dtype mismatch f32[3] and i32[3]");
  CHECK(infer_error("add", {f32({3})}) == "add: expects 2 operands, got 1 (got f32[3])");
}

TEST_CASE("binary ops: each one's dtype class") {
  for (const char* name : {"add", "sub", "mul", "div", "rem"}) {
    INFO(name);
    CHECK(infer1(name, {i32({2}), i32({2})}).str_short() == "i32[2]");
    CHECK(infer_error(name, {boolean({2}), boolean({2})}) ==
          std::string(name) + ": does not accept dtype bool (got bool[2], bool[2])");
  }
  for (const char* name : {"max", "min"}) {
    INFO(name);
    CHECK(infer1(name, {boolean({2}), boolean({2})}).str_short() == "bool[2]");
    CHECK(infer_error(name, {f32({2}), f64({2})}) ==
          std::string(name) + ": dtype mismatch f32[2] and f64[2]");
  }
  for (const char* name : {"and", "or", "xor"}) {
    INFO(name);
    CHECK(infer1(name, {boolean({2}), boolean({})}).str_short() == "bool[2]");
    CHECK(infer1(name, {u32({}), u32({})}).str_short() == "u32[]");
    CHECK(infer_error(name, {f32({}), f32({})}) ==
          std::string(name) + ": does not accept dtype f32 (got f32[], f32[])");
  }
  for (const char* name : {"atan2", "nextafter"}) {
    INFO(name);
    CHECK(infer1(name, {f32({2}), f32({2})}).str_short() == "f32[2]");
    CHECK(infer_error(name, {i32({2}), i32({2})}) ==
          std::string(name) + ": does not accept dtype i32 (got i32[2], i32[2])");
  }
}

TEST_CASE("a binary result is weak only when every operand is") {
  CHECK(infer1("add", {f32({}, true), f32({}, true)}).weak_type);
  CHECK_FALSE(infer1("add", {f32({}, true), f32({3})}).weak_type);
  CHECK_FALSE(infer1("lt", {f32({}, true), f32({3})}).weak_type);
}

TEST_CASE("mul's out_dtype fixes the result dtype") {
  CHECK(infer1("mul", {bf16({2}), bf16({2})}, {{"out_dtype", DType::f32}}).str_short() == "f32[2]");
  CHECK(infer1("mul", {f32({2}), f32({2})}, {{"out_dtype", NoneParam{}}}).str_short() == "f32[2]");
}

TEST_CASE("comparisons give bool") {
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    INFO(name);
    CHECK(infer1(name, {f32({3}), f32({})}).str_short() == "bool[3]");
    CHECK(infer1(name, {boolean({}), boolean({})}).str_short() == "bool[]");
    CHECK(infer_error(name, {f32({3}), i32({3})}) ==
          std::string(name) + ": dtype mismatch f32[3] and i32[3]");
  }
  ShapedArray key(DType::opaque, {2});
  CHECK(infer1("eq", {key, key}).str_short() == "bool[2]");
  CHECK(infer_error("lt", {key, key}) ==
        "lt: does not accept dtype opaque (got opaque[2], opaque[2])");
}

TEST_CASE("pow takes a float base and an int or same-float exponent") {
  CHECK(infer1("pow", {f32({3}), i32({})}).str_short() == "f32[3]");
  CHECK(infer1("pow", {f32({3}), f32({3})}).str_short() == "f32[3]");
  CHECK(infer_error("pow", {i32({3}), i32({3})}) ==
        "pow: does not accept dtype i32 (got i32[3], i32[3])");
  CHECK(infer_error("pow", {f32({}), f64({})}) == "pow: dtype mismatch f32[] and f64[]");
}

TEST_CASE("add_any needs two operands of one type") {
  CHECK(infer1("add_any", {f32({3}), f32({3})}).str_short() == "f32[3]");
  CHECK(infer_error("add_any", {f32({3}), f32({1})}) ==
        "add_any: incompatible shapes f32[3] and f32[1]");
  CHECK(infer_error("add_any", {f32({3}), i32({3})}) ==
        "add_any: dtype mismatch f32[3] and i32[3]");
}

TEST_CASE("select_n") {
  CHECK(infer1("select_n", {boolean({}), f32({3}), f32({3})}).str_short() == "f32[3]");
  CHECK(infer1("select_n", {boolean({3}), f32({3}), f32({3})}).str_short() == "f32[3]");
  CHECK(infer1("select_n", {i32({}), i32({2}), i32({2}), i32({2})}).str_short() == "i32[2]");
  CHECK(infer1("select_n", {boolean({}), f32({}, true), f32({}, true)}).weak_type);
  CHECK(infer_error("select_n", {boolean({}), f32({3}), f32({4})}) ==
        "select_n: cases must have the same shape (got bool[], f32[3], f32[4])");
  CHECK(infer_error("select_n", {boolean({2}), f32({3}), f32({3})}) ==
        "select_n: the predicate must be a scalar or have the cases' shape "
        "(got bool[2], f32[3], f32[3])");
  CHECK(infer_error("select_n", {f32({}), f32({3}), f32({3})}) ==
        "select_n: the predicate must be bool or an integer (got f32[], f32[3], f32[3])");
  CHECK(infer_error("select_n", {boolean({}), f32({}), f32({}), f32({})}) ==
        "select_n: a bool predicate selects between at most 2 cases "
        "(got bool[], f32[], f32[], f32[])");
  CHECK(infer_error("select_n", {boolean({}), f32({}), i32({})}) ==
        "select_n: cases must have the same dtype (got bool[], f32[], i32[])");
}

TEST_CASE("clamp") {
  // wild-jaxprs/06: `clamp 0:i32[] c 2:i32[]`
  CHECK(infer1("clamp", {i32({}, true), i32({}), i32({}, true)}).str_short() == "i32[]");
  CHECK(infer1("clamp", {f32({}), f32({4}), f32({4})}).str_short() == "f32[4]");
  CHECK(infer_error("clamp", {f32({3}), f32({4}), f32({})}) ==
        "clamp: min must be a scalar or have the operand's shape (got f32[3], f32[4], f32[])");
  CHECK(infer_error("clamp", {f32({}), f32({4}), f32({2})}) ==
        "clamp: max must be a scalar or have the operand's shape (got f32[], f32[4], f32[2])");
  CHECK(infer_error("clamp", {i32({}), f32({4}), f32({})}) ==
        "clamp: dtype mismatch i32[], f32[4] and f32[]");
}

TEST_CASE("convert_element_type takes its dtype and weak type from params") {
  Params p{{"new_dtype", DType::i32}, {"weak_type", false}, {"sharding", NoneParam{}}};
  ShapedArray out = infer1("convert_element_type", {boolean({})}, p);
  CHECK(out.str_short() == "i32[]");
  CHECK_FALSE(out.weak_type);
  p.set("weak_type", true);
  CHECK(infer1("convert_element_type", {i32({1})}, p).weak_type);
  // A dtype read as text is accepted too.
  CHECK(infer1("convert_element_type", {i32({1})}, {{"new_dtype", "float32"}, {"weak_type", false}})
            .str_short() == "f32[1]");
  CHECK(infer_error("convert_element_type", {i32({1})}, {{"weak_type", false}}) ==
        "convert_element_type: missing param 'new_dtype'");
  CHECK(infer_error("convert_element_type", {i32({1})},
                    {{"new_dtype", "float99"}, {"weak_type", false}}) ==
        "convert_element_type: param 'new_dtype' is not a dtype");
}

TEST_CASE("identity-like ops") {
  CHECK(infer_str("name", {f32({3})}, {{"name", "a"}}) == std::vector<std::string>{"f32[3]"});
  CHECK(infer_str("copy", {i32({2, 2})}) == std::vector<std::string>{"i32[2,2]"});
  CHECK(infer_error("name", {f32({3}), f32({3})}, {{"name", "a"}}) ==
        "name: expects 1 operand, got 2 (got f32[3], f32[3])");
  CHECK(infer_str("optimization_barrier", {f32({3}), i32({}), boolean({2})}) ==
        std::vector<std::string>{"f32[3]", "i32[]", "bool[2]"});
  CHECK(infer("optimization_barrier", {}).empty());
  CHECK(infer1("optimization_barrier", {f32({}, true)}).weak_type);
}
