#include "compiler/cuda/gpu.h"

#include <fmt/format.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/Target/LLVM/NVVM/Target.h>
#include <mlir/Target/LLVMIR/Dialect/All.h>

#include <mutex>

#include "compiler/cpu/fusion.h"
#include "compiler/cpu/lowering.h"
#include "compiler/cpu/mlir_pipeline.h"
#include "ir/errors.h"
#include "passes/pipeline.h"

namespace cjax::lower {
namespace {

// Fused (fuse_elementwise, before this pipeline) and bufferized like the CPU pipeline; then every
// parallel loop nest is tiled (innermost dimension by the block size), mapped onto blocks and
// threads and turned into a gpu.launch; the launches are outlined into kernel functions, which are
// lowered to the NVVM dialect. `to_binary` goes on to PTX through LLVM's NVPTX back end (math
// functions from CUDA's libdevice).
std::string gpu_pipeline(const GpuOptions& o, int max_rank, bool to_binary) {
  std::vector<std::string> tiles(static_cast<size_t>(std::max(max_rank, 1)), "1");
  tiles.back() = std::to_string(o.block_size);
  std::string p = fmt::format(
      "canonicalize,"
      "eliminate-empty-tensors,"
      "one-shot-bufferize{{allow-return-allocs-from-loops}},"
      "canonicalize,"
      "buffer-deallocation-pipeline,"
      "func.func(convert-linalg-to-parallel-loops,"
      "scf-parallel-loop-tiling{{parallel-loop-tile-sizes={} no-min-max-bounds=true}},"
      "gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
      "lower-affine,"
      "canonicalize,"
      "gpu-kernel-outlining,"
      "nvvm-attach-target{{chip={} O=3}},"
      "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,reconcile-unrealized-casts)",
      fmt::join(tiles, ","), o.chip);
  if (to_binary) p += ",gpu-module-to-binary{format=isa}";
  return p;
}

int max_rank(const Jaxpr& j) {
  int r = 0;
  for (const Eqn& e : j.eqns)
    for (const Var& v : e.outputs) r = std::max(r, static_cast<int>(v.aval().rank()));
  return r;
}

std::unique_ptr<mlir::MLIRContext> make_gpu_context() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The NVPTX back end (the CPU pipeline initializes only the native target).
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
  auto ctx = make_context();
  mlir::DialectRegistry registry;
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ctx->appendDialectRegistry(registry);
  return ctx;
}

mlir::OwningOpRef<mlir::ModuleOp> lower_for_gpu(mlir::MLIRContext& ctx, DiagnosticCollector& diags,
                                                const Jaxpr& jaxpr, const std::string& where,
                                                const GpuOptions& options, bool to_binary) {
  mlir::OwningOpRef<mlir::ModuleOp> module = new_module(ctx);
  // The runtime calls' objects are needed only to run the module, which this stage does not.
  std::vector<std::unique_ptr<RuntimeCall>> calls;
  // Dots stay host calls on this path (cuBLAS is the plan): no native loops for them.
  lower_function(*module, prepare_for_lowering(jaxpr), calls, where, "main", DotPath::blas);
  verify_module(*module, diags);
  fuse_elementwise(*module);
  run_passes(*module, diags, gpu_pipeline(options, max_rank(jaxpr), to_binary),
             "the GPU pass pipeline");
  return module;
}

}  // namespace

std::vector<GpuKernelModule> compile_to_ptx(const Jaxpr& jaxpr, const std::string& where,
                                            const GpuOptions& options) {
  auto ctx = make_gpu_context();
  DiagnosticCollector diags(*ctx);
  auto module = lower_for_gpu(*ctx, diags, jaxpr, where, options, true);
  std::vector<GpuKernelModule> out;
  module->walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute a : binary.getObjects())
      if (auto object = mlir::dyn_cast<mlir::gpu::ObjectAttr>(a)) {
        std::string ptx = object.getObject().str();
        while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // a C string's terminator
        out.push_back({binary.getName().str(), std::move(ptx)});
      }
  });
  return out;
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
  auto module = lower_for_gpu(*ctx, diags, jaxpr, where, options, false);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return os.str();
}

}  // namespace cjax::lower
