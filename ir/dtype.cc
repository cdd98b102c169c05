#include "ir/dtype.h"

#include <array>

namespace cjax {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view short_name;
  std::string_view long_name;
  size_t itemsize;
};

constexpr std::array<DTypeInfo, 15> kInfos = {{
    {DType::bool_, "bool", "bool", 1},
    {DType::i8, "i8", "int8", 1},
    {DType::i16, "i16", "int16", 2},
    {DType::i32, "i32", "int32", 4},
    {DType::i64, "i64", "int64", 8},
    {DType::u8, "u8", "uint8", 1},
    {DType::u16, "u16", "uint16", 2},
    {DType::u32, "u32", "uint32", 4},
    {DType::u64, "u64", "uint64", 8},
    {DType::f16, "f16", "float16", 2},
    {DType::bf16, "bf16", "bfloat16", 2},
    {DType::f32, "f32", "float32", 4},
    {DType::f64, "f64", "float64", 8},
    {DType::key_fry, "key<fry>", "key<fry>", 8},
    {DType::opaque, "opaque", "opaque", 0},
}};

const DTypeInfo& info(DType t) {
  return kInfos[static_cast<size_t>(t)];
}

}  // namespace

std::string_view short_name(DType t) {
  return info(t).short_name;
}
std::string_view long_name(DType t) {
  return info(t).long_name;
}
size_t itemsize(DType t) {
  return info(t).itemsize;
}

std::optional<DType> dtype_from_short_name(std::string_view s) {
  for (const auto& i : kInfos)
    if (i.type != DType::opaque && i.short_name == s) return i.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_long_name(std::string_view s) {
  for (const auto& i : kInfos)
    if (i.type != DType::opaque && i.long_name == s) return i.type;
  return std::nullopt;
}

bool is_floating(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}
bool is_signed_integer(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}
bool is_unsigned_integer(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64;
}
bool is_integer(DType t) {
  return is_signed_integer(t) || is_unsigned_integer(t);
}

}  // namespace cjax
