// dot_general through the system BLAS (OpenBLAS): a plan made once per operand types (at compile
// time for compiled code), then one gemm per batch index. Operands are read in place wherever
// their free and contracting dims each flatten to one strided axis (DotOperand); the rest are
// first packed into [batch..., free..., contract...].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/params.h"
#include "ir/shaped_array.h"

namespace cjax::runtime {

// How the gemm reads one operand: per batch index a [rows, cols] matrix (m x k for the lhs,
// k x n for the rhs) stored row-major with `ld` elements between rows, or stored transposed.
// Strided views are read in place: the attention's [batch, seq, heads, head_dim] operands,
// batched over (batch, heads), are matrices `heads * head_dim` apart. An operand whose dims do
// not flatten so is first packed (`perm`) into [batch..., rows..., cols...].
struct DotOperand {
  Shape shape;
  std::vector<int64_t> perm;  // empty: read in place
  bool transposed = false;
  int64_t ld = 1;
  std::vector<int64_t> batch_strides;  // elements between batch indices, one per batch dim
  // Read in place as consecutive matrices without gaps: what a strided-batched gemm takes.
  bool dense = true;
};

struct DotPlan {
  DType dtype = DType::f32;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  Shape batch_shape;  // the batch dims' sizes, in the dimension numbers' order
  DotOperand lhs, rhs;
};

// The dimensions of a rank-`rank` dot_general operand that are neither contracted nor batch.
std::vector<int64_t> dot_free_dims(int64_t rank, const std::vector<int64_t>& contract,
                                   const std::vector<int64_t>& batch);

// True when plan_dot handles these operand and output types (f32 or f64 throughout).
bool blas_dot_supported(const ShapedArray& lhs, const ShapedArray& rhs, const ShapedArray& out);
// Throws cjax::UnsupportedError for types blas_dot_supported rejects, cjax::TypeError for
// dimension numbers that do not fit the operands.
DotPlan plan_dot(const ShapedArray& lhs, const ShapedArray& rhs, const DotDimensionNumbers& dn,
                 const ShapedArray& out);
// The kernel family OpenBLAS chose for this CPU ("SkylakeX", "Haswell", ...). OpenBLAS 0.3.21
// does not know Sapphire Rapids and falls back to "Prescott" (SSE3, several times slower) unless
// OPENBLAS_CORETYPE=SkylakeX is set before the process starts; reports name the choice.
std::string blas_core_name();

// out (row-major, the dot_general output layout) = lhs · rhs.
void run_dot(const DotPlan& plan, const void* lhs, const void* rhs, void* out);

}  // namespace cjax::runtime
