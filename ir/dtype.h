// Element types of arrays, with JAX's long names (`float32`, printed in params such as
// `new_dtype=float32`) and short names (`f32`, printed in avals such as `f32[5,4]`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cjax {

enum class DType : uint8_t {
  bool_,
  i8,
  i16,
  i32,
  i64,
  u8,
  u16,
  u32,
  u64,
  f16,
  bf16,
  f32,
  f64,
  // JAX's threefry PRNG key (`key<fry>`): each element is a key, stored as its two u32 words.
  // Only the random_* primitives compute with it (jax.random.key).
  key_fry,
  // A dtype the IR keeps only as text (e.g. `key<fry>` in a parsed jaxpr). Its name lives in
  // ShapedArray::annotations; no pass or kernel accepts it.
  opaque,
};

std::string_view short_name(DType t);  // "f32", "bool", "bf16"
std::string_view long_name(DType t);   // "float32", "bool", "bfloat16"
std::optional<DType> dtype_from_short_name(std::string_view s);
std::optional<DType> dtype_from_long_name(std::string_view s);
size_t itemsize(DType t);  // bytes per element; 0 for opaque
bool is_floating(DType t);
bool is_integer(DType t);  // signed or unsigned, not bool
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);

}  // namespace cjax
