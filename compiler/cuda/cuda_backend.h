// The GPU back end as cjax's evaluator: after cjax::set_backend(cjax::make_cuda_backend()), jit,
// grad, value_and_grad, vjp, ... on concrete arrays compile each program for the GPU
// (compile_gpu_program) and run it there (runtime/cuda/gpu_executable.h); the same program runs
// on the CPU again after set_backend of a CpuBackend. Programs the GPU back end refuses (control
// flow) throw cjax::UnsupportedError. No MLIR header is included here.
#pragma once

#include <cstddef>
#include <memory>

#include "cjax/backend.h"

namespace cjax {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int ordinal = 0);
  ~CudaBackend() override;
  std::vector<runtime::Buffer> run(const Jaxpr& jaxpr, std::span<const runtime::Buffer> consts,
                                   std::span<const runtime::Buffer> args) override;
  std::shared_ptr<const PreparedProgram> prepare(const Jaxpr& jaxpr) override;
  size_t compiled_programs() const;

  struct Cache;

 private:
  std::unique_ptr<Cache> cache_;
  int ordinal_;
};

// A CudaBackend for device `ordinal`; throws cjax::UnsupportedError ("no CUDA device: ...") where
// there is no GPU or no cuBLAS.
std::shared_ptr<Backend> make_cuda_backend(int ordinal = 0);

}  // namespace cjax
