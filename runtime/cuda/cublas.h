// cuBLAS, loaded at run time like the driver (runtime/cuda/driver.h): dot_general on the GPU is
// one strided-batched gemm. The library is looked for as $CJAX_CUBLAS, then libcublas.so.13,
// .so.12 and .so on the loader's path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/dtype.h"

namespace cjax::runtime::cuda {

// Why cuBLAS cannot be used here, or nothing when it can.
std::optional<std::string> cublas_unavailable_reason();

// Column-major, as BLAS: C[i] (m x n, ld ldc) = op(A[i]) (m x k) * op(B[i]) (k x n) for each of
// `batch` matrices, `stride_*` elements apart; f32 or f64, on device addresses, on the current
// context's default stream or `stream` (a Stream's handle). Full-precision arithmetic (no TF32).
// Throws cjax::UnsupportedError when cuBLAS is unavailable, cjax::Error when it fails.
void gemm_strided_batched(DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                          uint64_t a, int64_t lda, int64_t stride_a, uint64_t b, int64_t ldb,
                          int64_t stride_b, uint64_t c, int64_t ldc, int64_t stride_c,
                          int64_t batch, void* stream = nullptr);

}  // namespace cjax::runtime::cuda
