// What the GPU back end does to a bufferized host function between MLIR's passes (compiler/cuda/
// gpu.cc runs them): every loop nest becomes a one-dimensional parallel loop, which MLIR then maps
// onto blocks of threads, so the host function is left with allocations, launches and runtime
// calls. Internal to compiler/cuda/; includes MLIR headers.
#pragma once

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/cuda/gpu_program.h"

namespace cjax::lower {

// The MLIR context of the GPU path: the CPU pipeline's, with the NVPTX back end and the NVVM
// target registered.
std::unique_ptr<mlir::MLIRContext> make_gpu_context();

// Before convert-linalg-to-parallel-loops: each linalg.generic's parallel loops are put outside
// its reduction loops (a reduction over a leading axis becomes a parallel loop over the kept axes
// with a sequential loop inside, not the other way round), and each memref.copy becomes a
// linalg.copy, which becomes a parallel loop like the rest.
void order_loops_for_gpu(mlir::func::FuncOp host);

// After convert-linalg-to-parallel-loops: every run of host code outside a parallel loop (a full
// reduction's loops, scalar arithmetic) is wrapped in a parallel loop of one iteration (a kernel
// of one thread), and every parallel loop is collapsed to one dimension. With `strict`, host code
// that holds kernels or allocations (control flow) is refused with cjax::UnsupportedError naming
// `where`; otherwise it stays on the host.
void wrap_host_code_for_gpu(mlir::func::FuncOp host, const std::string& where, bool strict);

// After the whole pipeline: the host function `main` of `module` (lowered from `prepared`) as
// the steps of a GpuProgram: its allocations become buffers, its launches and runtime calls
// steps, its deallocations frees. `kernel_modules` names the module's kernel modules in the
// order the program will hold them. Throws cjax::UnsupportedError for host code of another kind.
runtime::cuda::GpuProgram plan_host_function(mlir::ModuleOp module, const Jaxpr& prepared,
                                             const std::string& where,
                                             const std::vector<std::string>& kernel_modules);

}  // namespace cjax::lower
