// What every kernel file uses: the registration interface of the kernel table, error helpers that
// name the running primitive, and row-major index arithmetic.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ir/errors.h"
#include "ir/params.h"
#include "runtime/buffer.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/interpreter.h"

namespace cjax::runtime {

// How a kernel receives its outputs. `preallocated`: apply_primitive allocates them from the out
// avals and the kernel writes into them (the public register_kernel's contract). `produced`: they
// arrive empty and the kernel assigns them, which lets call-like and identity-like primitives
// forward buffers without a copy; apply_primitive then checks their types.
enum class OutputMode { preallocated, produced };

class KernelRegistry {
 public:
  virtual void add(std::string_view prim_name, Kernel k,
                   OutputMode mode = OutputMode::preallocated) = 0;

 protected:
  ~KernelRegistry() = default;
};

// One registration function per file of runtime/kernels/, all called once when the kernel table
// is first used (explicit calls: a static library drops object files nothing references).
// One file per primitive family, named after the family of ir/rules/.
void register_unary_kernels(KernelRegistry& r);           // elementwise_unary.cc
void register_binary_kernels(KernelRegistry& r);          // elementwise_binary.cc
void register_select_kernels(KernelRegistry& r);          // elementwise_select.cc
void register_convert_kernels(KernelRegistry& r);         // elementwise_convert.cc
void register_identity_kernels(KernelRegistry& r);        // elementwise_identity.cc
void register_shape_kernels(KernelRegistry& r);           // structural.cc
void register_slicing_kernels(KernelRegistry& r);         // slicing.cc
void register_gather_scatter_kernels(KernelRegistry& r);  // gather_scatter.cc
void register_reduction_kernels(KernelRegistry& r);       // reductions.cc
void register_cumulative_kernels(KernelRegistry& r);      // reductions_cumulative.cc
void register_sort_kernels(KernelRegistry& r);            // reductions_sort.cc
void register_dot_kernels(KernelRegistry& r);             // dot.cc
void register_control_flow_kernels(KernelRegistry& r);    // control_flow.cc
void register_random_kernels(KernelRegistry& r);          // random.cc
void register_collective_kernels(KernelRegistry& r);      // collectives.cc

// The primitive whose kernel runs on this thread (set by apply_primitive), for messages.
std::string_view current_primitive();

// Throws cjax::TypeError "interpreter: <prim>: <message>".
template <class... Args>
[[noreturn]] void kernel_type_error(fmt::format_string<Args...> f, Args&&... args) {
  throw TypeError(fmt::format("interpreter: {}: {}", current_primitive(),
                              fmt::format(f, std::forward<Args>(args)...)));
}
template <class... Args>
[[noreturn]] void kernel_unsupported(fmt::format_string<Args...> f, Args&&... args) {
  throw UnsupportedError(fmt::format("interpreter: {}: {}", current_primitive(),
                                     fmt::format(f, std::forward<Args>(args)...)));
}

// dispatch<Set> with the running primitive's name in the error.
template <DTypeSet Set, class F>
decltype(auto) dispatch_op(DType t, F&& f) {
  return dispatch<Set>(t, current_primitive(), std::forward<F>(f));
}

// A new buffer holding b's elements converted to `to` (convert_element_type's rules).
Buffer convert_buffer(const Buffer& b, DType to);

// What a reduction kernel accumulates in: most reduce in the operand's own dtype
// (`SameAccumulator`); sums of floats narrower than f64 accumulate in f64 and round once
// (`WideSum`), as the compiled reductions do (compiler/cpu/lower_reductions.cc): an f32
// accumulator stops growing at 2^24 (a sum of 2^25 ones gave 16777216), and its rounding error
// grows with the number of terms. f64 sums stay f64; integer sums wrap as XLA's do.
struct SameAccumulator {
  template <class T>
  using Accumulator = T;
};
struct WideSum {
  template <class T>
  using Accumulator =
      std::conditional_t<std::is_floating_point_v<T> && sizeof(T) < sizeof(double), double, T>;
};

void check_arity(std::span<const Buffer> inputs, size_t n);
void check_outputs(std::span<const Buffer> outputs, size_t n);
void check_min_arity(std::span<const Buffer> inputs, size_t n);
void check_same_dtype(const Buffer& a, const Buffer& b);

// Element strides of a row-major array.
std::vector<int64_t> row_major_strides(const Shape& shape);
// Element strides for reading `operand` at the indices of `out_shape` under the elementwise
// broadcasting rule: a scalar broadcasts to any shape; otherwise the ranks are equal and each
// dimension equals the output's or is 1 (stride 0). A TypeError naming the operand otherwise.
std::vector<int64_t> broadcast_strides(const ShapedArray& operand, const Shape& out_shape,
                                       size_t operand_index);
// `shape` split around `axis` into element counts: the dimensions before it, its own, those after.
// Element (o, k, i) is at flat index (o * size + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, size_t axis);
// Normalizes a possibly negative axis into [0, rank); a TypeError when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);
// The value of a scalar integer or bool buffer (an index operand), exactly.
int64_t scalar_index(const Buffer& b);

// Visits every index of `shape` in row-major order, calling f(offsets) where offsets[k] =
// base[k] + sum_d index[d] * strides[k][d]: the positions of that element in N arrays.
template <size_t N, class F>
void strided_loop(const Shape& shape, const std::array<const int64_t*, N>& strides,
                  std::array<int64_t, N> base, F&& f) {
  const size_t rank = shape.size();
  for (int64_t d : shape)
    if (d == 0) return;
  if (rank == 0) {
    f(base);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  while (true) {
    std::array<int64_t, N> off = base;
    for (int64_t i = 0; i < inner; ++i) {
      f(off);
      for (size_t k = 0; k < N; ++k) off[k] += inner_stride[k];
    }
    // Odometer over the outer dimensions.
    size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++index[d];
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
  }
}

// Fills contiguous `dst` (of shape `shape`) with src[src_base + sum index[d] * src_strides[d]],
// element strides and offsets; any element size.
void strided_copy(void* dst, const void* src, size_t itemsize, const Shape& shape,
                  const std::vector<int64_t>& src_strides, int64_t src_base);

}  // namespace cjax::runtime
