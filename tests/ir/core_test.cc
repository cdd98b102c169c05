#include <catch2/catch.hpp>

#include "ir/jaxpr.h"
#include "ir/params.h"
#include "ir/shaped_array.h"
#include "ir/source_info.h"

using namespace cjax;

TEST_CASE("avals print in JAX's short form") {
  CHECK(ShapedArray(DType::f32, {5, 4}).str_short() == "f32[5,4]");
  CHECK(ShapedArray(DType::f32, {}).str_short() == "f32[]");
  CHECK(ShapedArray(DType::bool_, {3}).str_short() == "bool[3]");
  CHECK(ShapedArray(DType::bf16, {2, 1}).str_short() == "bf16[2,1]");
  CHECK(ShapedArray(DType::f64, {2, 3}).nbytes() == 48);
  CHECK(shape_str({16}) == "(16,)");
  CHECK(shape_str({1, 2}) == "(1, 2)");
  CHECK(shape_str({}) == "()");
}

TEST_CASE("dtype names round trip") {
  for (DType t : {DType::bool_, DType::i32, DType::u8, DType::f16, DType::bf16, DType::f64}) {
    CHECK(dtype_from_short_name(short_name(t)) == t);
    CHECK(dtype_from_long_name(long_name(t)) == t);
  }
  CHECK(long_name(DType::f32) == "float32");
  CHECK_FALSE(dtype_from_short_name("f128").has_value());
}

TEST_CASE("float literals print as Python's repr") {
  CHECK(python_float_repr(3.0) == "3.0");
  CHECK(python_float_repr(0.5) == "0.5");
  CHECK(python_float_repr(-2.0) == "-2.0");
  CHECK(python_float_repr(0.0) == "0.0");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(1e-6) == "1e-06");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(static_cast<float>(1e-6)) == "9.999999974752427e-07");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(1.5e16) == "1.5e+16");
  CHECK(python_float_repr(123456789012345.0) == "123456789012345.0");
  CHECK(python_float_repr(8388608.0) == "8388608.0");
  CHECK(python_float_repr(0.1) == "0.1");
  CHECK(python_float_repr(1.0 / 0.0) == "inf");
}

TEST_CASE("literals carry their dtype") {
  auto l = Literal::of(0.1, DType::f32, /*weak=*/true);
  CHECK(l.value_str() == python_float_repr(static_cast<float>(0.1)));
  CHECK(l.aval.weak_type);
  CHECK(Literal::of_int(2, DType::i32).value_str() == "2");
  CHECK(Literal::of_bool(true).value_str() == "True");
}

TEST_CASE("function names are shortened like co_qualname") {
  CHECK(short_function_name("cjax::Array g(const cjax::Array&, const cjax::Array&)") == "g");
  CHECK(short_function_name("int main()") == "main");
  CHECK(short_function_name("int main()::<lambda(const cjax::Array&)>") == "main::<lambda>");
  CHECK(short_function_name("std::vector<int> ns::Foo::bar(int) const") == "bar");
  CHECK(short_function_name("") == "");
  SourceInfo s;
  CHECK(s.summarize() == "unknown");
}

TEST_CASE("params keep typed values") {
  Params p{{"axes", ParamValue::ints({0, 1})}, {"name", "a"}};
  CHECK(p.get_ints("axes") == std::vector<int64_t>{0, 1});
  CHECK(p.get_string("name") == "a");
  CHECK_THROWS_WITH(p.get_int("name"), "param 'name' is not an int");
  CHECK_THROWS_WITH(p.get_int("missing"), "missing param 'missing'");
  DotDimensionNumbers dn{{1}, {0}, {}, {}};
  auto back = DotDimensionNumbers::from_param(dn.to_param());
  CHECK(back.lhs_contract == std::vector<int64_t>{1});
  CHECK(back.rhs_batch.empty());
}
