#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {

void check_arity(std::span<const Buffer> inputs, size_t n) {
  if (inputs.size() != n) kernel_type_error("expected {} operands, got {}", n, inputs.size());
}

void check_outputs(std::span<const Buffer> outputs, size_t n) {
  if (outputs.size() != n) kernel_type_error("expected {} outputs, got {}", n, outputs.size());
}

void check_min_arity(std::span<const Buffer> inputs, size_t n) {
  if (inputs.size() < n)
    kernel_type_error("expected at least {} operands, got {}", n, inputs.size());
}

void check_same_dtype(const Buffer& a, const Buffer& b) {
  if (a.aval().dtype != b.aval().dtype)
    kernel_type_error("operands have different dtypes ({}, {})", a.aval().str_short(),
                      b.aval().str_short());
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

std::vector<int64_t> broadcast_strides(const ShapedArray& operand, const Shape& out_shape,
                                       size_t operand_index) {
  std::vector<int64_t> strides(out_shape.size(), 0);
  if (operand.rank() == 0) return strides;
  if (operand.shape.size() != out_shape.size())
    kernel_type_error("operand {} ({}) does not broadcast to shape {}", operand_index,
                      operand.str_short(), shape_str(out_shape));
  std::vector<int64_t> own = row_major_strides(operand.shape);
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (operand.shape[d] == out_shape[d])
      strides[d] = own[d];
    else if (operand.shape[d] != 1)
      kernel_type_error("operand {} ({}) does not broadcast to shape {}", operand_index,
                        operand.str_short(), shape_str(out_shape));
  }
  return strides;
}

AxisSplit split_at(const Shape& shape, size_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) s.outer *= shape[d];
    if (d == axis) s.size = shape[d];
    if (d > axis) s.inner *= shape[d];
  }
  return s;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) kernel_type_error("axis {} out of range for rank {}", axis, rank);
  return a;
}

int64_t scalar_index(const Buffer& b) {
  if (b.aval().size() != 1)
    kernel_type_error("index operand must be a scalar, got {}", b.aval().str_short());
  return dispatch_op<kIntBool>(b.aval().dtype, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    T v = b.as<T>()[0];
    if constexpr (std::is_same_v<T, uint64_t>)  // saturate: only the clamped value matters
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    else
      return static_cast<int64_t>(v);
  });
}

namespace {
template <class T>
void strided_copy_typed(T* dst, const T* src, const Shape& shape,
                        const std::vector<int64_t>& strides, int64_t base) {
  int64_t out = 0;
  strided_loop<1>(shape, {strides.data()}, {base},
                  [&](const std::array<int64_t, 1>& o) { dst[out++] = src[o[0]]; });
}
}  // namespace

void strided_copy(void* dst, const void* src, size_t itemsize, const Shape& shape,
                  const std::vector<int64_t>& src_strides, int64_t src_base) {
  switch (itemsize) {
    case 1:
      return strided_copy_typed(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), shape,
                                src_strides, src_base);
    case 2:
      return strided_copy_typed(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src),
                                shape, src_strides, src_base);
    case 4:
      return strided_copy_typed(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src),
                                shape, src_strides, src_base);
    case 8:
      return strided_copy_typed(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src),
                                shape, src_strides, src_base);
    default:
      kernel_unsupported("no element copy for item size {}", itemsize);
  }
}

}  // namespace cjax::runtime
