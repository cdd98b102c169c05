#include "runtime/strided_copy.h"

#include <cstring>
#include <vector>

namespace cjax::runtime {
namespace {

struct Dim {
  int64_t size, src, dst;  // extent and the two strides
};

// Drops size-1 dims and merges a dim into the next-inner one where both layouts step from the
// last element of one row to the first of the next as the inner dim steps: one dim instead of two.
std::vector<Dim> simplified(std::span<const int64_t> sizes, std::span<const int64_t> src,
                            std::span<const int64_t> dst) {
  std::vector<Dim> dims;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 1) continue;
    const Dim d{sizes[i], src[i], dst[i]};
    if (!dims.empty()) {
      Dim& outer = dims.back();
      if (outer.src == d.src * d.size && outer.dst == d.dst * d.size) {
        outer = Dim{outer.size * d.size, d.src, d.dst};
        continue;
      }
    }
    dims.push_back(d);
  }
  return dims;
}

template <class T>
void copy_run(const char* src, int64_t src_stride, char* dst, int64_t dst_stride, int64_t n) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i * dst_stride] = s[i * src_stride];
}

// One innermost run: a memcpy when both layouts are contiguous, a typed loop otherwise.
void copy_inner(size_t elem_size, const Dim& inner, const char* src, char* dst) {
  if (inner.src == 1 && inner.dst == 1) {
    std::memcpy(dst, src, elem_size * static_cast<size_t>(inner.size));
    return;
  }
  switch (elem_size) {
    case 1:
      return copy_run<uint8_t>(src, inner.src, dst, inner.dst, inner.size);
    case 2:
      return copy_run<uint16_t>(src, inner.src, dst, inner.dst, inner.size);
    case 4:
      return copy_run<uint32_t>(src, inner.src, dst, inner.dst, inner.size);
    case 8:
      return copy_run<uint64_t>(src, inner.src, dst, inner.dst, inner.size);
    default:
      for (int64_t i = 0; i < inner.size; ++i)
        std::memcpy(dst + i * inner.dst * static_cast<int64_t>(elem_size),
                    src + i * inner.src * static_cast<int64_t>(elem_size), elem_size);
  }
}

}  // namespace

void strided_copy(size_t elem_size, std::span<const int64_t> sizes, const void* src,
                  std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides) {
  for (int64_t s : sizes)
    if (s == 0) return;
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  std::vector<Dim> dims = simplified(sizes, src_strides, dst_strides);
  if (dims.empty()) {
    std::memcpy(d, s, elem_size);
    return;
  }
  const auto bytes = static_cast<int64_t>(elem_size);
  const Dim inner = dims.back();
  dims.pop_back();
  // An odometer over the outer dims, moving both byte offsets as it counts.
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t so = 0, dof = 0;
  while (true) {
    copy_inner(elem_size, inner, s + so, d + dof);
    size_t k = dims.size();
    for (; k > 0; --k) {
      Dim& o = dims[k - 1];
      so += o.src * bytes;
      dof += o.dst * bytes;
      if (++idx[k - 1] < o.size) break;
      so -= o.src * o.size * bytes;
      dof -= o.dst * o.size * bytes;
      idx[k - 1] = 0;
    }
    if (k == 0) return;
  }
}

}  // namespace cjax::runtime
