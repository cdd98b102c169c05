// The first half of the GPU back end: a jaxpr's loops as NVIDIA GPU kernels. The program is
// lowered by the same rules as for the CPU; its parallel loop nests (every elementwise chain,
// fused) are tiled onto a grid of thread blocks, outlined into a `gpu.module` and compiled by
// LLVM's NVPTX back end to PTX. This header includes no MLIR or LLVM header.
//
// Not yet: reductions and scalar code stay host loops, dot_general stays a host call (cuBLAS is
// the plan), and there is no runtime to load and launch the kernels; see docs/backend.md.
#pragma once

#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax::lower {

struct GpuOptions {
  std::string chip = "sm_90";  // the PTX target (H100/H200)
  int block_size = 256;        // threads per block along a loop nest's innermost dimension
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

}  // namespace cjax::lower
