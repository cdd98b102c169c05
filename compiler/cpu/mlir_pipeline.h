// Internal to compiler/cpu/: the MLIR context every compile uses, and the pass pipeline from
// the lowered tensor program to the LLVM dialect.
#pragma once

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cjax::lower {

// A fresh context with every dialect, extension and translation the pipeline needs.
std::unique_ptr<mlir::MLIRContext> make_context();

// Collects MLIR's diagnostics while alive, so failures carry MLIR's own words.
class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext& ctx);
  ~DiagnosticCollector();
  std::string text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Loops shorter than this run on one thread; a program with none this long is compiled without
// the async runtime (parallel loops cost compile time and gain nothing there).
inline constexpr int64_t kMinParallelElements = int64_t{1} << 18;
// Longer loops run in chunks of this many iterations of their innermost dimension.
inline constexpr int64_t kParallelChunk = 4096;

// Verifies the lowered module, then fuses, bufferizes and lowers it to the LLVM dialect;
// `parallel` runs its parallel loops on the async runtime's threads. Throws cjax::Error with
// the diagnostics on failure.
void run_pipeline(mlir::ModuleOp module, DiagnosticCollector& diags, bool parallel);
void verify_module(mlir::ModuleOp module, DiagnosticCollector& diags);
// Runs a textual pass pipeline (the module's contents, no builtin.module(...) wrapper) on
// `module`; throws cjax::Error naming `what` with the diagnostics on failure.
void run_passes(mlir::ModuleOp module, DiagnosticCollector& diags, const std::string& passes,
                const char* what);

// The threads a parallel loop is split for (the machine's hardware threads).
unsigned parallel_workers();

// The functions of MLIR's async runtime, which runs the compiled parallel loops on a thread
// pool, by name; empty when the library is not installed (loops then run on one thread).
const std::vector<std::pair<std::string, void*>>& async_runtime_symbols();

}  // namespace cjax::lower
