// Internal to compiler/cpu/: the shape of the parallel loop nests handed to the async runtime.
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <cstdint>

namespace cjax::lower {

// Parallel loop nests (without reductions) of fewer than `min_parallel` iterations, counting
// those of the scf.for loops in their bodies (a reduction over the rows of a matrix is a
// parallel loop over the rows, each summing its row in an scf.for), become plain scf.for nests;
// longer ones are split into chunks of their innermost dimension, of about `chunk` iterations
// of work each: the parallel loop runs over chunks and each chunk is an scf.for. Only loops
// with constant bounds are touched.
//
// Why: the async runtime's machinery (an outlined task function and a coroutine per loop) costs
// the JIT about 30 ms a loop, and splitting a short loop across threads gains nothing. And LLVM
// does not vectorize the loop async-parallel-for outlines (its bounds are remainders of the
// linearized index, so the vectorizer cannot bound the arrays it touches): a GELU over 64x8192
// took 1.2 ms there against 0.3 ms as a plain loop. A chunk's scf.for is a plain loop again.
void shape_parallel_loops(mlir::ModuleOp module, int64_t min_parallel, int64_t chunk);

}  // namespace cjax::lower
