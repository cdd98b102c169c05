#include "compiler/cuda/gpu.h"

#include <fmt/format.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/IR/BuiltinOps.h>

#include "compiler/cpu/fusion.h"
#include "compiler/cpu/lowering.h"
#include "compiler/cpu/mlir_pipeline.h"
#include "compiler/cuda/gpu_passes.h"
#include "ir/errors.h"
#include "passes/pipeline.h"
#include "passes/split_reductions.h"

namespace cjax::lower {
namespace {

// Fused (fuse_elementwise) and bufferized like the CPU pipeline; then every loop nest becomes a
// one-dimensional parallel loop (gpu_passes.h), tiled by the block size, mapped onto blocks and
// threads and turned into a gpu.launch; the launches are outlined into kernel functions, which are
// lowered to the NVVM dialect and, with `to_binary`, to PTX through LLVM's NVPTX back end (math
// functions from CUDA's libdevice).
void run_gpu_pipeline(mlir::ModuleOp module, DiagnosticCollector& diags, const GpuOptions& o,
                      const std::string& where, bool strict, bool to_binary) {
  run_passes(module, diags,
             "canonicalize,eliminate-empty-tensors,"
             "one-shot-bufferize{allow-return-allocs-from-loops},canonicalize,"
             "buffer-deallocation-pipeline",
             "the GPU pass pipeline (bufferization)");
  module.walk([](mlir::func::FuncOp f) {
    if (!f.isExternal()) order_loops_for_gpu(f);
  });
  run_passes(module, diags, "func.func(convert-linalg-to-parallel-loops)",
             "the GPU pass pipeline (loops)");
  module.walk([&](mlir::func::FuncOp f) {
    if (!f.isExternal()) wrap_host_code_for_gpu(f, where, strict);
  });
  std::string p = fmt::format(
      "func.func(scf-parallel-loop-tiling{{parallel-loop-tile-sizes={} no-min-max-bounds=true}},"
      "gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
      "lower-affine,canonicalize,gpu-kernel-outlining,"
      "nvvm-attach-target{{chip={} O=3}},"
      "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,reconcile-unrealized-casts)",
      o.block_size, o.chip);
  if (to_binary) p += ",gpu-module-to-binary{format=isa}";
  run_passes(module, diags, p, "the GPU pass pipeline (kernels)");
}

mlir::OwningOpRef<mlir::ModuleOp> lower_for_gpu(mlir::MLIRContext& ctx, DiagnosticCollector& diags,
                                                const Jaxpr& prepared, const std::string& where,
                                                const GpuOptions& options, bool strict,
                                                bool to_binary,
                                                std::vector<std::unique_ptr<RuntimeCall>>& calls) {
  mlir::OwningOpRef<mlir::ModuleOp> module = new_module(ctx);
  // Every dot is a runtime call (cuBLAS on the device): no native loops for them.
  lower_function(*module, prepared, calls, where, "main", DotPath::blas,
                 /*memory_transfers=*/true);
  verify_module(*module, diags);
  fuse_elementwise(*module);
  run_gpu_pipeline(*module, diags, options, where, strict, to_binary);
  return module;
}

std::vector<GpuKernelModule> kernel_modules(mlir::ModuleOp module) {
  std::vector<GpuKernelModule> out;
  module.walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute a : binary.getObjects())
      if (auto object = mlir::dyn_cast<mlir::gpu::ObjectAttr>(a)) {
        std::string ptx = object.getObject().str();
        while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // a C string's terminator
        out.push_back({binary.getName().str(), std::move(ptx)});
      }
  });
  return out;
}

// The training-step pipeline's preparation (an offload policy's transfers kept), and long
// reductions split into levels of kernels.
Jaxpr prepare_for_gpu(const Jaxpr& jaxpr) {
  return split_long_reductions(prepare_for_lowering(jaxpr, {.keep_memory_transfers = true}));
}

}  // namespace

std::vector<GpuKernelModule> compile_to_ptx(const Jaxpr& jaxpr, const std::string& where,
                                            const GpuOptions& options) {
  auto ctx = make_gpu_context();
  DiagnosticCollector diags(*ctx);
  std::vector<std::unique_ptr<RuntimeCall>> calls;
  auto module =
      lower_for_gpu(*ctx, diags, prepare_for_gpu(jaxpr), where, options, false, true, calls);
  return kernel_modules(*module);
}

std::string lower_to_gpu_text(const Jaxpr& jaxpr, GpuStage stage, const std::string& where,
                              const GpuOptions& options) {
  if (stage == GpuStage::ptx) {
    std::string text;
    for (const GpuKernelModule& m : compile_to_ptx(jaxpr, where, options))
      text += fmt::format("// kernel module {}\n{}\n", m.name, m.ptx);
    return text;
  }
  auto ctx = make_gpu_context();
  DiagnosticCollector diags(*ctx);
  std::vector<std::unique_ptr<RuntimeCall>> calls;
  auto module =
      lower_for_gpu(*ctx, diags, prepare_for_gpu(jaxpr), where, options, false, false, calls);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return os.str();
}

runtime::cuda::GpuProgram compile_gpu_program(const Jaxpr& jaxpr, const std::string& where,
                                              const GpuOptions& options) {
  const Jaxpr prepared = prepare_for_gpu(jaxpr);
  auto ctx = make_gpu_context();
  DiagnosticCollector diags(*ctx);
  std::vector<std::unique_ptr<RuntimeCall>> calls;
  auto module = lower_for_gpu(*ctx, diags, prepared, where, options, true, true, calls);
  std::vector<GpuKernelModule> kernels = kernel_modules(*module);
  std::vector<std::string> names;
  for (const GpuKernelModule& m : kernels) names.push_back(m.name);
  runtime::cuda::GpuProgram program = plan_host_function(*module, prepared, where, names);
  for (GpuKernelModule& m : kernels) program.modules.push_back({m.name, std::move(m.ptx)});
  for (const auto& call : calls) program.calls.push_back(call->jaxpr_text());
  return program;
}

}  // namespace cjax::lower
