// JAX's type promotion lattice (jax/_src/dtypes.py, x64 disabled) and the conversions it emits.
#include <catch2/catch.hpp>

#include "cjax/api.h"

using namespace cjax;

namespace {

DTypeAndWeak strong(DType t) {
  return {t, false};
}
DTypeAndWeak weak(DType t) {
  return {t, true};
}

DTypeAndWeak lattice(DTypeAndWeak a, DTypeAndWeak b) {
  DTypeAndWeak args[] = {a, b};
  return lattice_result_type(args);
}

}  // namespace

TEST_CASE("promote_types follows JAX's lattice") {
  using D = DType;
  struct Row {
    D a, b, want;
  };
  const Row rows[] = {
      {D::bool_, D::bool_, D::bool_}, {D::bool_, D::i32, D::i32}, {D::bool_, D::f32, D::f32},
      {D::u8, D::i8, D::i16},         {D::u8, D::i32, D::i32},    {D::u8, D::u16, D::u16},
      {D::u16, D::i16, D::i32},       {D::u32, D::i32, D::i32},   {D::i8, D::i16, D::i16},
      {D::i32, D::f32, D::f32},       {D::i32, D::f16, D::f16},   {D::i8, D::bf16, D::bf16},
      {D::f16, D::bf16, D::f32},      {D::bf16, D::f32, D::f32},  {D::f32, D::f64, D::f64},
      {D::i64, D::u64, D::f32},       {D::u8, D::u8, D::u8},      {D::i64, D::f16, D::f16},
  };
  for (const Row& r : rows) {
    INFO(short_name(r.a) << " + " << short_name(r.b));
    CHECK(promote_types(r.a, r.b) == r.want);
    CHECK(promote_types(r.b, r.a) == r.want);
  }
  CHECK_THROWS_AS(promote_types(DType::opaque, DType::f32), TypeError);
}

TEST_CASE("weak types yield to the other operand") {
  CHECK(lattice(weak(DType::f32), strong(DType::bf16)) == strong(DType::bf16));
  CHECK(lattice(weak(DType::i32), strong(DType::u8)) == strong(DType::u8));
  CHECK(lattice(weak(DType::i32), strong(DType::f16)) == strong(DType::f16));
  CHECK(lattice(weak(DType::f32), strong(DType::f32)) == strong(DType::f32));
  // A weak float beats a strong int, and stays weak.
  CHECK(lattice(strong(DType::i32), weak(DType::f32)) == weak(DType::f32));
  CHECK(lattice(strong(DType::bool_), weak(DType::i32)) == weak(DType::i32));
  // All weak: the bound of the strong types, weak.
  CHECK(lattice(weak(DType::i32), weak(DType::f32)) == weak(DType::f32));
  // Strong i64 and u64 meet only at the weak float.
  CHECK(lattice(strong(DType::i64), strong(DType::u64)) == weak(DType::f32));
  // result_type makes a weak result the default dtype of its kind.
  DTypeAndWeak w[] = {weak(DType::bf16)};
  CHECK(result_type(w) == weak(DType::f32));
  CHECK(to_inexact_dtype(DType::i32) == DType::f32);
  CHECK(to_inexact_dtype(DType::bool_) == DType::f32);
  CHECK(to_inexact_dtype(DType::bf16) == DType::bf16);
  CHECK(to_numeric_dtype(DType::bool_) == DType::i32);
}

TEST_CASE("C++ numbers are weak scalars") {
  CHECK(Array(1.0).aval().str_short() == "f32[]");
  CHECK(Array(1.0).weak_type());
  CHECK(Array(2).dtype() == DType::i32);
  CHECK(Array(2).weak_type());
  CHECK(Array(true).dtype() == DType::bool_);
  CHECK_FALSE(Array(true).weak_type());
  CHECK_FALSE(array(1.0).weak_type());  // cjax::array, like jnp.array, is strong
}

TEST_CASE("promotion emits convert_element_type where JAX does") {
  auto add = [](const Array& a, const Array& b) { return a + b; };
  // i32 + f32: the int operand is converted.
  CHECK(to_string(make_jaxpr(add)(ShapeDtype{DType::i32, {3}}, ShapeDtype{DType::f32, {3}})) ==
        R"({ lambda ; a:i32[3] b:f32[3]. let
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[3] = add c b
  in (d,) })");
  // A C++ number takes the array's dtype: no conversion, a typed literal.
  auto plus_one = [](const Array& x) { return x + 1.0; };
  CHECK(to_string(make_jaxpr(plus_one)(ShapeDtype{DType::bf16, {2}})) ==
        "{ lambda ; a:bf16[2]. let b:bf16[2] = add a 1.0:bf16[] in (b,) }");
  auto plus_int = [](const Array& x) { return x + 1; };
  CHECK(to_string(make_jaxpr(plus_int)(ShapeDtype{DType::u8, {2}})) ==
        "{ lambda ; a:u8[2]. let b:u8[2] = add a 1:u8[] in (b,) }");
  // An int array plus a C++ double: the result is a weak float.
  auto plus_half = [](const Array& x) { return x + 1.5; };
  CHECK(to_string(make_jaxpr(plus_half)(ShapeDtype{DType::i32, {3}})) ==
        R"({ lambda ; a:i32[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] a
    c:f32[3] = add b 1.5:f32[]
  in (c,) })");
  // A weak f32 argument combined with a strong array is made strong (wild-jaxprs file 10).
  auto times_ones = [](const Array& arg) { return arg * np::ones({1}); };
  CHECK(to_string(make_jaxpr(times_ones)(ShapeDtype{DType::f32, {}, true})) ==
        R"({ lambda ; a:f32[]. let
    b:f32[1] = broadcast_in_dim 1.0:f32[]
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[1] = mul c b
  in (d,) })");
  // f16 + bf16 -> f32: both converted.
  CHECK(to_string(make_jaxpr(add)(ShapeDtype{DType::f16, {}}, ShapeDtype{DType::bf16, {}})) ==
        R"({ lambda ; a:f16[] b:bf16[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:f32[] = add c d
  in (e,) })");
}
