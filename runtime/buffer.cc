#include "runtime/buffer.h"

#include <fmt/format.h>

#include <cstring>
#include <new>

#include "ir/byte_size.h"
#include "ir/errors.h"
#include "runtime/allocator.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/scalar_convert.h"

namespace cjax::runtime {
namespace {

// Buffers own their storage through a shared_ptr whose deleter hands the block back.
std::shared_ptr<void> tracked_allocate(size_t nbytes) {
  // An empty array still gets a block so that the Buffer is non-null; it counts as 0 bytes.
  void* p = tracked_malloc(nbytes);
  // Should the control block's allocation throw, shared_ptr runs the deleter, which frees it.
  return std::shared_ptr<void>(p, [](void* q) { tracked_free(q); });
}

void check_aval(const ShapedArray& aval, const char* what) {
  if (aval.dtype == DType::opaque)
    throw UnsupportedError(
        fmt::format("Buffer::{}: no storage for the opaque dtype of {}", what, aval.str_short()));
  for (int64_t d : aval.shape)
    if (d < 0)
      throw TypeError(
          fmt::format("Buffer::{}: negative dimension in shape {}", what, shape_str(aval.shape)));
}

template <class T>
constexpr bool matches_dtype(DType t) {
  if constexpr (std::is_same_v<T, bool>) return t == DType::bool_;
  if constexpr (std::is_same_v<T, int8_t>) return t == DType::i8;
  if constexpr (std::is_same_v<T, int16_t>) return t == DType::i16;
  if constexpr (std::is_same_v<T, int32_t>) return t == DType::i32;
  if constexpr (std::is_same_v<T, int64_t>) return t == DType::i64;
  if constexpr (std::is_same_v<T, uint8_t>) return t == DType::u8;
  // Raw bits also fill the 16-bit float dtypes.
  if constexpr (std::is_same_v<T, uint16_t>)
    return t == DType::u16 || t == DType::f16 || t == DType::bf16;
  if constexpr (std::is_same_v<T, uint32_t>) return t == DType::u32;
  if constexpr (std::is_same_v<T, uint64_t>) return t == DType::u64;
  if constexpr (std::is_same_v<T, float>) return t == DType::f32;
  if constexpr (std::is_same_v<T, double>) return t == DType::f64;
  return false;
}

}  // namespace

Buffer Buffer::allocate(const ShapedArray& aval) {
  check_aval(aval, "allocate");
  Buffer b;
  b.aval_ = aval;
  try {
    b.storage_ = tracked_allocate(aval.nbytes());
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format("out of memory: cannot allocate {} ({}, {} bytes)", aval.str_short(),
                            format_byte_size(aval.nbytes()), aval.nbytes()));
  }
  return b;
}

Buffer Buffer::zeros(const ShapedArray& aval) {
  Buffer b = allocate(aval);
  std::memset(b.data(), 0, b.nbytes());  // all-zero bits are 0 / 0.0 / False in every dtype
  return b;
}

Buffer Buffer::full(const ShapedArray& aval, double value) {
  Buffer b = allocate(aval);
  dispatch<kStorage>(aval.dtype, "Buffer::full", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = convert_scalar<T>(value);
    T* p = b.as<T>();
    for (int64_t i = 0, n = aval.size(); i < n; ++i) p[i] = v;
  });
  return b;
}

template <class T>
Buffer Buffer::from_data(const ShapedArray& aval, std::span<const T> data) {
  if (!matches_dtype<T>(aval.dtype))
    throw TypeError(fmt::format("Buffer::from_data: element type does not match dtype of {}",
                                aval.str_short()));
  if (static_cast<int64_t>(data.size()) != aval.size())
    throw TypeError(
        fmt::format("Buffer::from_data: {} elements given for {}", data.size(), aval.str_short()));
  Buffer b = allocate(aval);
  if (!data.empty()) std::memcpy(b.data(), data.data(), b.nbytes());
  return b;
}

#define CJAX_INSTANTIATE_FROM_DATA(T) \
  template Buffer Buffer::from_data<T>(const ShapedArray&, std::span<const T>);
CJAX_INSTANTIATE_FROM_DATA(bool)
CJAX_INSTANTIATE_FROM_DATA(int8_t)
CJAX_INSTANTIATE_FROM_DATA(int16_t)
CJAX_INSTANTIATE_FROM_DATA(int32_t)
CJAX_INSTANTIATE_FROM_DATA(int64_t)
CJAX_INSTANTIATE_FROM_DATA(uint8_t)
CJAX_INSTANTIATE_FROM_DATA(uint16_t)
CJAX_INSTANTIATE_FROM_DATA(uint32_t)
CJAX_INSTANTIATE_FROM_DATA(uint64_t)
CJAX_INSTANTIATE_FROM_DATA(float)
CJAX_INSTANTIATE_FROM_DATA(double)
#undef CJAX_INSTANTIATE_FROM_DATA

Buffer Buffer::from_const(const ConstValue& c) {
  check_aval(c.aval, "from_const");
  if (!c.data)
    throw UnsupportedError(fmt::format("Buffer::from_const: the constant {} has no value (elided)",
                                       c.aval.str_short()));
  Buffer b;
  b.aval_ = c.aval;
  // Buffers are immutable once a kernel has written them, so sharing the const's bytes is safe.
  b.storage_ = std::const_pointer_cast<void>(c.data);
  return b;
}

Buffer Buffer::borrow(const ShapedArray& aval, void* data) {
  check_aval(aval, "borrow");
  Buffer b;
  b.aval_ = aval;
  b.storage_ = std::shared_ptr<void>(data, [](void*) {});
  return b;
}

ConstValue Buffer::to_const() const {
  return ConstValue{aval_, storage_};
}

double Buffer::element(size_t i) const {
  if (!storage_) throw Error("Buffer::element: empty buffer");
  if (i >= static_cast<size_t>(aval_.size()))
    throw Error(fmt::format("Buffer::element: index {} out of range for {}", i, aval_.str_short()));
  return dispatch<kStorage>(aval_.dtype, "Buffer::element", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return to_double(as<T>()[i]);
  });
}

std::vector<double> Buffer::to_doubles() const {
  std::vector<double> out(static_cast<size_t>(aval_.size()));
  if (out.empty()) return out;
  if (!storage_) throw Error("Buffer::to_doubles: empty buffer");
  dispatch<kStorage>(aval_.dtype, "Buffer::to_doubles", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = as<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = to_double(p[i]);
  });
  return out;
}

}  // namespace cjax::runtime
