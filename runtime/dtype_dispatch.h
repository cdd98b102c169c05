// Calls a generic lambda with the C++ element type of a DType. Each call site names the set of
// dtypes it accepts; others throw cjax::UnsupportedError naming the operation and the dtype. Only
// the accepted types are instantiated, so the lambda may use operations that only they support.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

#include "ir/dtype.h"
#include "ir/errors.h"
#include "runtime/half.h"

namespace cjax::runtime {

template <class T>
struct TypeTag {
  using type = T;
};

using DTypeSet = uint32_t;
constexpr DTypeSet dtype_bit(DType t) {
  return DTypeSet{1} << static_cast<unsigned>(t);
}

inline constexpr DTypeSet kBool = dtype_bit(DType::bool_);
inline constexpr DTypeSet kSigned =
    dtype_bit(DType::i8) | dtype_bit(DType::i16) | dtype_bit(DType::i32) | dtype_bit(DType::i64);
inline constexpr DTypeSet kUnsigned =
    dtype_bit(DType::u8) | dtype_bit(DType::u16) | dtype_bit(DType::u32) | dtype_bit(DType::u64);
inline constexpr DTypeSet kInt = kSigned | kUnsigned;
inline constexpr DTypeSet kFloat = dtype_bit(DType::f32) | dtype_bit(DType::f64);
inline constexpr DTypeSet kHalf = dtype_bit(DType::f16) | dtype_bit(DType::bf16);
inline constexpr DTypeSet kNumeric = kInt | kFloat;
inline constexpr DTypeSet kIntBool = kInt | kBool;
// What the interpreter computes with: every dtype except the 16-bit floats and opaque.
inline constexpr DTypeSet kAll = kNumeric | kBool;
// Also the 16-bit floats, as the storage types Half / BFloat16 (conversion and printing only).
inline constexpr DTypeSet kStorage = kAll | kHalf;

[[noreturn]] inline void unsupported_dtype(std::string_view op, DType t) {
  throw UnsupportedError(
      fmt::format("interpreter: {} does not support dtype {}", op, short_name(t)));
}

template <DTypeSet Set, class F>
decltype(auto) dispatch(DType t, std::string_view op, F&& f) {
#define CJAX_DISPATCH_CASE(DT, T)                                            \
  case DType::DT:                                                            \
    if constexpr ((Set & dtype_bit(DType::DT)) != 0) return f(TypeTag<T>{}); \
    break;
  switch (t) {
    CJAX_DISPATCH_CASE(bool_, bool)
    CJAX_DISPATCH_CASE(i8, int8_t)
    CJAX_DISPATCH_CASE(i16, int16_t)
    CJAX_DISPATCH_CASE(i32, int32_t)
    CJAX_DISPATCH_CASE(i64, int64_t)
    CJAX_DISPATCH_CASE(u8, uint8_t)
    CJAX_DISPATCH_CASE(u16, uint16_t)
    CJAX_DISPATCH_CASE(u32, uint32_t)
    CJAX_DISPATCH_CASE(u64, uint64_t)
    CJAX_DISPATCH_CASE(f16, Half)
    CJAX_DISPATCH_CASE(bf16, BFloat16)
    CJAX_DISPATCH_CASE(f32, float)
    CJAX_DISPATCH_CASE(f64, double)
    case DType::key_fry:
    case DType::opaque:
      break;
  }
#undef CJAX_DISPATCH_CASE
  unsupported_dtype(op, t);
}

}  // namespace cjax::runtime
