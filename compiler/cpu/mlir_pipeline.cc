#include "compiler/cpu/mlir_pipeline.h"

#include <fmt/format.h>
#include <llvm/Support/TargetSelect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Math/Transforms/Passes.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Utils/StaticValueUtils.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <dlfcn.h>
#include <llvm/ADT/StringMap.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <thread>

#include "compiler/cpu/async_tasks.h"
#include "compiler/cpu/carry_in_place.h"
#include "compiler/cpu/free_after_last_use.h"
#include "compiler/cpu/fusion.h"
#include "compiler/cpu/lowering.h"
#include "compiler/cpu/parallel_loops.h"
#include "compiler/cpu/reuse_dying_buffers.h"
#include "ir/errors.h"

namespace cjax::lower {
namespace {

// After fuse_elementwise (elementwise chains as few loop nests on tensors), bufferization writes
// results in place where it can (straight into the caller's output buffers). (Parsed into a
// module-anchored pass manager, so the pipeline is the module's contents, without a
// builtin.module(...) wrapper.) eliminate-empty-tensors makes a loop whose result is an output
// write the output's buffer instead of a fresh one that is then copied over. Private functions (a
// repeated call's body, OutlinedCalls) take and return buffers of the identity layout; a buffer one
// returns that it does not own is cloned (a copy, once convert-bufferization-to-memref has run).
const char* kToBuffers =
    "canonicalize,"
    "eliminate-empty-tensors,"
    "one-shot-bufferize{allow-return-allocs-from-loops bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,"
    "buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref";
// Then, with each buffer freed after its last reader and elementwise loops writing over the
// operands they are the last to read (free_after_last_use, reuse_dying_buffers), the loops
// become scf.parallel nests.
const char* kLinalgToLoops = "func.func(convert-linalg-to-parallel-loops)";

// Then to the LLVM dialect. With `parallel`, the parallel loops left become async tasks over the
// async runtime's thread pool: one block per worker at most, none smaller than 16K iterations.
// memref.alloc becomes calls to the tracking allocator (use-generic-functions). Math ops with an
// LLVM intrinsic (abs, fma, sqrt, floor, ...) become intrinsics, which vectorize; the rest become
// libm calls, as in the interpreter. (expm1, log1p, erfc, lgamma are lowered to libm calls
// directly: the intrinsic route would compute exp(x) - 1 and log(1 + x), losing precision near 0.)
std::string to_llvm_pipeline(bool parallel) {
  const unsigned workers = parallel_workers();
  const std::string async = parallel
                                ? fmt::format(
                                      "async-parallel-for{{async-dispatch=false num-workers={} "
                                      "min-task-size=16384}},"
                                      "async-to-async-runtime,async-runtime-ref-counting,"
                                      "async-runtime-ref-counting-opt,convert-async-to-llvm,",
                                      workers)
                                : std::string();
  return async +
         "expand-strided-metadata,"
         "lower-affine,"
         "convert-scf-to-cf,"
         "finalize-memref-to-llvm{use-generic-functions=true},"
         "convert-math-to-llvm,"
         "convert-math-to-libm,"
         "convert-arith-to-llvm,"
         "convert-index-to-llvm,"
         "convert-func-to-llvm,"
         "convert-cf-to-llvm,"
         "reconcile-unrealized-casts";
}

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerAllPasses();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

}  // namespace

std::unique_ptr<mlir::MLIRContext> make_context() {
  init_once();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  auto ctx = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  return ctx;
}

struct DiagnosticCollector::Impl {
  mlir::MLIRContext& ctx;
  mlir::DiagnosticEngine::HandlerID id;
  std::string text;
};

DiagnosticCollector::DiagnosticCollector(mlir::MLIRContext& ctx)
    : impl_(std::make_unique<Impl>(Impl{ctx, {}, {}})) {
  impl_->id = ctx.getDiagEngine().registerHandler([this](mlir::Diagnostic& d) {
    // One line per diagnostic: the notes (a dump of the failing op) are left out, so that the
    // CLI's error stays one line.
    std::string line = d.str();
    std::replace(line.begin(), line.end(), '\n', ' ');
    if (!impl_->text.empty()) impl_->text += "; ";
    impl_->text += line;
    return mlir::success();
  });
}

DiagnosticCollector::~DiagnosticCollector() {
  impl_->ctx.getDiagEngine().eraseHandler(impl_->id);
}

std::string DiagnosticCollector::text() const {
  return impl_->text;
}

void verify_module(mlir::ModuleOp module, DiagnosticCollector& diags) {
  if (mlir::failed(mlir::verify(module)))
    throw Error(fmt::format("lower: the lowered module is not valid MLIR: {}", diags.text()));
}

unsigned parallel_workers() {
  return std::max(1u, std::thread::hardware_concurrency());
}

const std::vector<std::pair<std::string, void*>>& async_runtime_symbols() {
  // Loaded once and never unloaded. The library's init hook creates the process's async runtime
  // and names its functions; every engine then resolves them from this list. (Handing the library
  // to each ExecutionEngine instead would tear the runtime down whenever any engine is destroyed,
  // under the feet of the engines still alive.)
  static const std::vector<std::pair<std::string, void*>> symbols = [] {
    std::vector<std::pair<std::string, void*>> out;
    if (!std::filesystem::exists(CJAX_MLIR_ASYNC_RUNTIME)) return out;
    void* lib = dlopen(CJAX_MLIR_ASYNC_RUNTIME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return out;
    using InitFn = void (*)(llvm::StringMap<void*>&);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "__mlir_execution_engine_init"));
    if (!init) return out;
    llvm::StringMap<void*> exported;
    init(exported);
    for (const auto& e : exported) out.emplace_back(e.getKey().str(), e.getValue());
    return count_async_tasks(std::move(out));
  }();
  return symbols;
}

// Aliasing facts LLVM cannot see for itself, so that a loop writing several buffers vectorizes
// without a runtime overlap check for every pair of them (LLVM gives up past a few): the
// allocator returns memory no other pointer reaches (a malloc-like `noalias` return), and the
// pointer parameters of the functions marked kNoaliasBuffers are noalias.
void mark_noalias(mlir::ModuleOp module) {
  auto unit = mlir::UnitAttr::get(module.getContext());
  if (auto alloc = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>("_mlir_memref_to_llvm_alloc"))
    alloc.setResultAttr(0, "llvm.noalias", unit);
  module.walk([&](mlir::LLVM::LLVMFuncOp f) {
    if (!f->hasAttr(kNoaliasBuffers)) return;
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (mlir::isa<mlir::LLVM::LLVMPointerType>(f.getArgument(i).getType()))
        f.setArgAttr(i, "llvm.noalias", unit);
  });
}

// The program's own functions are never inlined: their C-interface wrappers and the JIT's
// packed wrappers would each get a copy of the body, compiled again for nothing (it doubled
// the JIT time of small programs).
void compile_bodies_once(mlir::ModuleOp module) {
  module.walk([&](mlir::LLVM::LLVMFuncOp f) {
    if (f->hasAttr(kNoaliasBuffers)) f.setNoInline(true);
  });
}

void run_pipeline(mlir::ModuleOp module, DiagnosticCollector& diags, bool parallel) {
  verify_module(module, diags);
  // f32 tanh and erf as polynomials (a few ulp from libm's): plain arithmetic the loop
  // vectorizer handles, where a libm call per element would dominate a GELU layer.
  mlir::RewritePatternSet approximations(module.getContext());
  mlir::populatePolynomialApproximateTanhPattern(approximations);
  mlir::populatePolynomialApproximateErfPattern(approximations);
  if (mlir::failed(mlir::applyPatternsAndFoldGreedily(module, std::move(approximations))))
    throw Error(fmt::format("lower: rewriting tanh and erf failed: {}", diags.text()));
  fuse_elementwise(module);
  carry_in_place(module);
  run_passes(module, diags, kToBuffers, "the MLIR pass pipeline");
  free_after_last_use(module);
  reuse_dying_buffers(module);
  run_passes(module, diags, kLinalgToLoops, "the MLIR pass pipeline");
  shape_parallel_loops(module, kMinParallelElements, kParallelChunk, max_parallel_loops());
  run_passes(module, diags, to_llvm_pipeline(parallel && !async_runtime_symbols().empty()),
             "the MLIR pass pipeline");
  mark_noalias(module);
  compile_bodies_once(module);
}

void run_passes(mlir::ModuleOp module, DiagnosticCollector& diags, const std::string& passes,
                const char* what) {
  mlir::PassManager pm(module.getContext());
  std::string parse_errors;
  llvm::raw_string_ostream os(parse_errors);
  if (mlir::failed(mlir::parsePassPipeline(passes, pm, os)))
    throw Error(fmt::format("lower: bad pass pipeline: {}", os.str()));
  if (mlir::failed(pm.run(module)))
    throw Error(fmt::format("lower: {} failed: {}", what, diags.text()));
}

}  // namespace cjax::lower
