// dot_general through the system BLAS (OpenBLAS): a plan made once per operand types (at compile
// time for compiled code), then one strided-batched gemm per call. Operands whose dimensions are
// not laid out as [batch..., free..., contract...] (or with free and contract swapped, which a
// gemm reads transposed) are first packed into that layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/params.h"
#include "ir/shaped_array.h"

namespace cjax::runtime {

struct DotPlan {
  DType dtype = DType::f32;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool trans_lhs = false, trans_rhs = false;
  // A permutation that packs the operand into the gemm layout, or empty when none is needed.
  std::vector<int64_t> lhs_perm, rhs_perm;
  Shape lhs_shape, rhs_shape;
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
