// Copies between two strided layouts of one box of elements: what a transposition, a packed
// operand or MLIR's memref.copy of a view needs. Dimensions of size 1 are dropped and dimensions
// laid out contiguously in both layouts are merged first, so a copy between two views of rows
// is one memcpy per row, and an element-wise loop runs only where a stride is not 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cjax::runtime {

// dst[i...] = src[i...] for every index of `sizes`; strides count elements of `elem_size` bytes
// and may be of any sign; the two boxes must not overlap.
void strided_copy(size_t elem_size, std::span<const int64_t> sizes, const void* src,
                  std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides);

}  // namespace cjax::runtime
