#include "runtime/cuda/cublas.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "ir/errors.h"
#include "runtime/cuda/driver.h"

namespace cjax::runtime::cuda {
namespace {

using Status = int;  // cublasStatus_t
using Handle = void*;
constexpr Status kSuccess = 0;

// The gemm's signature is the same for S and D but for the element type.
template <class T>
using Gemm = Status (*)(Handle, int, int, int, int, int, const T*, const T*, int, long long,
                        const T*, int, long long, const T*, T*, int, long long, int);

struct Api {
  Status (*create)(Handle*) = nullptr;
  Status (*set_stream)(Handle, void*) = nullptr;
  Gemm<float> sgemm = nullptr;
  Gemm<double> dgemm = nullptr;
  Handle handle = nullptr;
  std::string unavailable;
};

Api load() {
  Api a;
  std::string tried;
  void* lib = nullptr;
  std::vector<std::string> names;
  if (const char* env = std::getenv("CJAX_CUBLAS")) names.emplace_back(env);
  for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
    names.emplace_back(n);
  for (const std::string& n : names) {
    if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    tried += (tried.empty() ? "" : ", ") + n;
  }
  if (!lib) {
    a.unavailable =
        fmt::format("cuBLAS is not installed (tried {}; set CJAX_CUBLAS to its path)", tried);
    return a;
  }
  a.create = reinterpret_cast<decltype(a.create)>(dlsym(lib, "cublasCreate_v2"));
  a.set_stream = reinterpret_cast<decltype(a.set_stream)>(dlsym(lib, "cublasSetStream_v2"));
  a.sgemm = reinterpret_cast<Gemm<float>>(dlsym(lib, "cublasSgemmStridedBatched"));
  a.dgemm = reinterpret_cast<Gemm<double>>(dlsym(lib, "cublasDgemmStridedBatched"));
  if (!a.create || !a.set_stream || !a.sgemm || !a.dgemm) {
    a.unavailable =
        "the cuBLAS found lacks cublasCreate_v2, cublasSetStream_v2 or the strided-batched gemms";
    return a;
  }
  make_current(0);
  if (Status s = a.create(&a.handle); s != kSuccess)
    a.unavailable = fmt::format("cublasCreate failed with status {}", s);
  return a;
}

const Api& api() {
  static const Api a = load();
  return a;
}

int narrow(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw UnsupportedError(fmt::format("cuBLAS: {} = {} does not fit its int parameter", what, v));
  return static_cast<int>(v);
}

}  // namespace

std::optional<std::string> cublas_unavailable_reason() {
  if (auto why = unavailable_reason()) return "no CUDA device: " + *why;
  const Api& a = api();
  if (a.unavailable.empty()) return std::nullopt;
  return a.unavailable;
}

void gemm_strided_batched(DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                          uint64_t a, int64_t lda, int64_t stride_a, uint64_t b, int64_t ldb,
                          int64_t stride_b, uint64_t c, int64_t ldc, int64_t stride_c,
                          int64_t batch, void* stream) {
  if (auto why = cublas_unavailable_reason()) throw UnsupportedError(*why);
  const Api& api_ = api();
  if (Status s = api_.set_stream(api_.handle, stream); s != kSuccess)
    throw Error(fmt::format("cuBLAS: setting the stream failed with status {}", s));
  // One gemm for either element type: C = 1 * op(A) op(B) + 0 * C.
  auto gemm = [&]<class T>(Gemm<T> fn) {
    const T one = 1, zero = 0;
    return fn(api_.handle, trans_a ? 1 : 0, trans_b ? 1 : 0,  // CUBLAS_OP_T or CUBLAS_OP_N
              narrow(m, "m"), narrow(n, "n"), narrow(k, "k"), &one, reinterpret_cast<const T*>(a),
              narrow(lda, "lda"), stride_a, reinterpret_cast<const T*>(b), narrow(ldb, "ldb"),
              stride_b, &zero, reinterpret_cast<T*>(c), narrow(ldc, "ldc"), stride_c,
              narrow(batch, "batch"));
  };
  Status s = kSuccess;
  if (dtype == DType::f32)
    s = gemm(api_.sgemm);
  else if (dtype == DType::f64)
    s = gemm(api_.dgemm);
  else
    throw UnsupportedError(
        fmt::format("cuBLAS: dot_general on {} (f32 and f64 only)", short_name(dtype)));
  if (s != kSuccess) throw Error(fmt::format("cuBLAS: the gemm failed with status {}", s));
}

}  // namespace cjax::runtime::cuda
