// Host buffers for the reference interpreter and eager ops. Every allocation goes through a
// tracking allocator, so live and peak bytes are known at any time.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/shaped_array.h"

namespace cjax::runtime {

struct MemoryStats {
  size_t live_bytes = 0;
  size_t peak_bytes = 0;
  size_t allocations = 0;  // total allocations since start
};

MemoryStats memory_stats();
// Sets peak_bytes to the current live_bytes, so a later peak measures one region of work.
void reset_peak_bytes();

// An array value on the host: an aval and row-major, contiguous storage. Copies share storage.
class Buffer {
 public:
  Buffer() = default;
  // Uninitialized storage for aval.nbytes() bytes, taken from the tracking allocator.
  static Buffer allocate(const ShapedArray& aval);
  static Buffer zeros(const ShapedArray& aval);
  // A scalar or array filled with `value` converted to aval.dtype.
  static Buffer full(const ShapedArray& aval, double value);
  // Copies `data` (aval.size() elements of T, T matching aval.dtype).
  template <class T>
  static Buffer from_data(const ShapedArray& aval, std::span<const T> data);
  // Shares a jaxpr constant's bytes (no copy).
  static Buffer from_const(const ConstValue& c);
  ConstValue to_const() const;  // shares storage
  // A view of memory someone else owns (compiled code's buffers); the caller keeps it alive.
  static Buffer borrow(const ShapedArray& aval, void* data);

  explicit operator bool() const { return storage_ != nullptr; }
  const ShapedArray& aval() const { return aval_; }
  size_t nbytes() const { return aval_.nbytes(); }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  template <class T>
  T* as() {
    return static_cast<T*>(data());
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data());
  }
  // Element i converted to double (any dtype); for tests and printing.
  double element(size_t i) const;
  std::vector<double> to_doubles() const;

 private:
  ShapedArray aval_;
  std::shared_ptr<void> storage_;
};

}  // namespace cjax::runtime
