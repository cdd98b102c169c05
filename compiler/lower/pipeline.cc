#include "compiler/lower/pipeline.h"

#include <fmt/format.h>
#include <llvm/Support/TargetSelect.h>
#include <mlir/Dialect/Math/Transforms/Passes.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <mutex>

#include "ir/errors.h"

namespace cjax::lower {
namespace {

// Elementwise chains fuse into one loop nest on tensors; bufferization then writes results in
// place where it can (straight into the caller's output buffers); memref.alloc becomes calls to
// the tracking allocator (use-generic-functions). Math ops with an LLVM intrinsic (abs, fma,
// sqrt, floor, ...) become intrinsics, which vectorize; the rest become libm calls, as in the
// interpreter. (expm1, log1p, erfc, lgamma are lowered to libm calls directly: the intrinsic
// route would compute exp(x) - 1 and log(1 + x), losing precision near 0.) (Parsed into a
// module-anchored pass manager, so the pipeline is the module's contents, without a
// builtin.module(...) wrapper.)
constexpr const char* kPipeline =
    "func.func(linalg-fuse-elementwise-ops),"
    "canonicalize,"
    "one-shot-bufferize,"
    "canonicalize,"
    "buffer-deallocation-pipeline,"
    "func.func(convert-linalg-to-loops),"
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
    if (!impl_->text.empty()) impl_->text += "\n";
    impl_->text += d.str();
    for (const mlir::Diagnostic& note : d.getNotes()) impl_->text += "\n  note: " + note.str();
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

void run_pipeline(mlir::ModuleOp module, DiagnosticCollector& diags) {
  verify_module(module, diags);
  // f32 tanh and erf as polynomials (a few ulp from libm's): plain arithmetic the loop
  // vectorizer handles, where a libm call per element would dominate a GELU layer.
  mlir::RewritePatternSet approximations(module.getContext());
  mlir::populatePolynomialApproximateTanhPattern(approximations);
  mlir::populatePolynomialApproximateErfPattern(approximations);
  if (mlir::failed(mlir::applyPatternsAndFoldGreedily(module, std::move(approximations))))
    throw Error(fmt::format("lower: rewriting tanh and erf failed: {}", diags.text()));
  mlir::PassManager pm(module.getContext());
  std::string parse_errors;
  llvm::raw_string_ostream os(parse_errors);
  if (mlir::failed(mlir::parsePassPipeline(kPipeline, pm, os)))
    throw Error(fmt::format("lower: bad pass pipeline: {}", os.str()));
  if (mlir::failed(pm.run(module)))
    throw Error(fmt::format("lower: the MLIR pass pipeline failed: {}", diags.text()));
}

}  // namespace cjax::lower
