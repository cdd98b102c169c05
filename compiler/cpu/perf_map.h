// CJAX_PERF_MAP=1: names compiled code for `perf report` by appending each function of a freshly
// JIT'd module to /tmp/perf-<pid>.map (perf's format for JIT'd code: start, size, name). LLVM's own
// perf listener, which MLIR's ExecutionEngine offers, exists only in LLVM builds configured with
// LLVM_USE_PERF, which Debian's is not; this writes the map from the engine's symbol table.
#pragma once

#include <mlir/ExecutionEngine/ExecutionEngine.h>
#include <mlir/IR/BuiltinOps.h>

#include <string>

namespace cjax::lower {

// Whether CJAX_PERF_MAP asks for the map (then compiles skip the object cache: loaded code has
// no names to give).
bool perf_map_requested();

// Appends the module's defined functions as `cjax:<program>:<function>`. A function's size is
// the distance to the next function's start (LLVM places a module's functions in one block), the
// last one's at most 64 KiB; approximate sizes only blur which of two neighbours a sample is in.
void write_perf_map(mlir::ModuleOp module, mlir::ExecutionEngine& engine,
                    const std::string& program);

}  // namespace cjax::lower
