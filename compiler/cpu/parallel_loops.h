// Internal to compiler/cpu/: the shape of the parallel loop nests handed to the async runtime.
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <cstddef>
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
//
// At most `max_parallel` loops stay parallel, the ones with the most work: each costs the JIT
// tens of milliseconds, and a transformer's training step has dozens of long loops (72 at
// d_model 256, seq 128, batch 16, which took its compile from 1.5 s to 6.3 s while its step,
// dominated by matrix products, ran no faster).
void shape_parallel_loops(mlir::ModuleOp module, int64_t min_parallel, int64_t chunk,
                          size_t max_parallel);

// The environment variable that bounds the parallel loops of one program, and its default.
inline constexpr const char* kMaxParallelLoopsVariable = "CJAX_MAX_PARALLEL_LOOPS";
inline constexpr size_t kDefaultMaxParallelLoops = 8;
// CJAX_MAX_PARALLEL_LOOPS's value (a count; 0 runs every loop on one thread), else the default.
// Throws cjax::UsageError for a value that is not a count.
size_t max_parallel_loops();

}  // namespace cjax::lower
