#include "runtime/buffer.h"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <new>

#include "ir/errors.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/scalar_convert.h"

namespace cjax::runtime {
namespace {

// The tracking allocator: process-wide counters, updated atomically so buffers may be created and
// dropped on any thread.
std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};
std::atomic<size_t> g_allocations{0};

constexpr std::align_val_t kAlignment{64};

void note_allocation(size_t n) {
  size_t live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}

struct TrackedDeleter {
  size_t nbytes;
  void operator()(void* p) const {
    ::operator delete(p, kAlignment);
    g_live.fetch_sub(nbytes, std::memory_order_relaxed);
  }
};

std::shared_ptr<void> tracked_allocate(size_t nbytes) {
  // An empty array still gets a (1-byte) block so that the Buffer is non-null; it counts as 0.
  void* p = ::operator new(nbytes == 0 ? 1 : nbytes, kAlignment);
  // Counted first: should the control block's allocation throw, shared_ptr runs the deleter,
  // which uncounts it.
  note_allocation(nbytes);
  return std::shared_ptr<void>(p, TrackedDeleter{nbytes});
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

MemoryStats memory_stats() {
  return {g_live.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed),
          g_allocations.load(std::memory_order_relaxed)};
}

void reset_peak_bytes() {
  g_peak.store(g_live.load(std::memory_order_relaxed));
}

Buffer Buffer::allocate(const ShapedArray& aval) {
  check_aval(aval, "allocate");
  Buffer b;
  b.aval_ = aval;
  b.storage_ = tracked_allocate(aval.nbytes());
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
