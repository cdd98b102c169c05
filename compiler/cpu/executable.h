// Compiling a jaxpr to native CPU code through MLIR, and running it. This header is the back
// end's public face and includes no MLIR or LLVM header.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"

namespace cjax::lower {

// How long each compile step took, and what the compiled code calls back into. `lower_ms`:
// jaxpr to MLIR (its first step, the jaxpr-to-jaxpr preparation, keys the cache); `optimize_ms`:
// MLIR's passes to the LLVM dialect; `jit_ms`: LLVM (translation, of which `llvm_opt_ms` its
// optimizer, and code generation and linking). A program found in the persistent compilation
// cache (`from_cache`, compiler/cpu/object_cache.h) skips the rest of the lowering, MLIR's passes
// and LLVM: `cache_ms` is the time to key, read and link its plan and object code.
struct CompileStats {
  double lower_ms = 0, optimize_ms = 0, jit_ms = 0, llvm_opt_ms = 0, cache_ms = 0;
  bool from_cache = false;
  // Whether the cache's key was the program's text, so that a hit skipped the lowering (else the
  // key is the lowered module: a program holding an opaque parameter).
  bool keyed_before_lowering = false;
  double total_ms() const { return lower_ms + optimize_ms + jit_ms + cache_ms; }
  std::vector<std::string> runtime_calls;  // one line per call site, e.g. "dot_general via BLAS"
  size_t functions = 0;                    // compiled functions (1 for a program compiled whole)
  size_t steps = 0;                        // calls of them a run makes (see CompileOptions)
};

// How dot_general compiles: a native loop nest for small products and OpenBLAS for the rest
// (by_size, the default), or always one way (to measure one against the other).
enum class DotPath { by_size, blas, native };

// When to cut a program into segments (compiler/cpu/segments.h), compiled as functions that a
// plan calls in order: segments start at each dot and each runtime call and hold at most
// `max_segment_eqns` eqns. A program is cut when some segments repeat (a network's equal layers,
// compiled once: LLVM's time goes with the distinct code, not the depth) or when it has more than
// `max_whole_eqns` eqns, nested bodies counted. Otherwise it compiles whole, as one function.
// `dot_path`: see DotPath.
struct CompileOptions {
  size_t max_whole_eqns = 256;
  size_t max_segment_eqns = 64;
  DotPath dot_path = DotPath::by_size;
  // A call body met at several places (passes/repeated_calls.h: a binomial scan schedule's
  // ranges) is compiled once, as a function; off, every call is compiled in place.
  bool outline_repeated_calls = true;
};

// What one run allocated: the outputs, and the peak of all buffers live during the call (the
// arguments, the outputs and every intermediate the compiled code allocated).
struct RunStats {
  size_t output_bytes = 0;
  size_t peak_bytes = 0;
};

class Executable {
 public:
  // Runs the compiled function. Throws cjax::TypeError when the arguments' types differ from the
  // jaxpr's invars (consts are bound already), and rethrows what a runtime call raised.
  std::vector<runtime::Buffer> run(std::span<const runtime::Buffer> args,
                                   RunStats* stats = nullptr) const;
  // The same, taking the arguments once the checks have passed (a run refused leaves `args` as
  // they were): the plan drops each after the step that reads it last, so a buffer nobody else
  // holds (a donated one) is freed as soon as the program is done with it.
  std::vector<runtime::Buffer> run_consuming(std::vector<runtime::Buffer>& args,
                                             RunStats* stats = nullptr) const;
  const std::vector<ShapedArray>& in_avals() const;
  const std::vector<ShapedArray>& out_avals() const;
  const CompileStats& compile_stats() const;

  struct Impl;
  explicit Executable(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

// Compiles `jaxpr` (its consts are bound into the executable). `where` names the program in
// messages (an example's name or a file). Throws cjax::UnsupportedError naming the primitive
// and `where` for an eqn that cannot be compiled, and cjax::Error with MLIR's diagnostic when
// a pass or the JIT fails.
std::shared_ptr<const Executable> compile(const Jaxpr& jaxpr, const std::string& where = "",
                                          const CompileOptions& options = {});

// The module at a stage of the pipeline, as text: `mlir` right after lowering (tensors, linalg),
// `lowered` after bufferization and lowering to the LLVM dialect, `llvm` as LLVM IR.
enum class Stage { mlir, lowered, llvm };
std::string lower_to_text(const Jaxpr& jaxpr, Stage stage, const std::string& where = "",
                          const CompileOptions& options = {});

}  // namespace cjax::lower
