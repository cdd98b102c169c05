// The GPU back end's compiler: a jaxpr as NVIDIA GPU kernels. The program is lowered by the same
// rules as for the CPU; every loop nest (each fused elementwise chain, each reduction, scalar
// code) becomes a kernel over a grid of thread blocks, outlined into a `gpu.module` and compiled
// by LLVM's NVPTX back end to PTX; products are cuBLAS calls. compile_gpu_program returns the
// whole program as data, which runtime/cuda/gpu_executable.h runs. This header includes no MLIR
// or LLVM header. See docs/gpu.md.
#pragma once

#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/cuda/gpu_program.h"

namespace cjax::lower {

struct GpuOptions {
  std::string chip = "sm_90";  // the PTX target (H100/H200)
  int block_size = 256;        // threads per block (each loop nest is collapsed to one dimension)
};

// The module with its kernels outlined and lowered to the NVVM dialect (`mlir`), or the PTX of
// each kernel module (`ptx`). Throws cjax::UnsupportedError / cjax::Error as lower::compile does.
enum class GpuStage { mlir, ptx };
std::string lower_to_gpu_text(const Jaxpr& jaxpr, GpuStage stage, const std::string& where = "",
                              const GpuOptions& options = {});

// The PTX of each kernel module, by module name.
struct GpuKernelModule {
  std::string name, ptx;
};
std::vector<GpuKernelModule> compile_to_ptx(const Jaxpr& jaxpr, const std::string& where = "",
                                            const GpuOptions& options = {});

// The program for runtime/cuda/gpu_executable.h: kernels, buffers and steps. Straight-line
// programs only: control flow (scan, while, cond) that holds kernels, allocations or products is
// refused with cjax::UnsupportedError naming `where`, as are primitives the CPU back end refuses.
runtime::cuda::GpuProgram compile_gpu_program(const Jaxpr& jaxpr, const std::string& where = "",
                                              const GpuOptions& options = {});

}  // namespace cjax::lower
