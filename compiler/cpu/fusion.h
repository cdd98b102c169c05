// Internal to compiler/cpu/: how the elementwise loops of a lowered program are fused.
#pragma once

#include <mlir/IR/BuiltinOps.h>

namespace cjax::lower {

// Fuses the linalg.generic ops of `module` (on tensors) into as few loop nests as dominance
// allows, so that a value is written to memory only where something outside its loop reads it:
//  - a cheap elementwise op (a few arithmetic ops on at most one array) read by several loops
//    is recomputed in each of them instead of being written once and read back;
//  - a producer read by several ops is fused into the first of them when that one comes before
//    all the others; the fused loop also yields the producer's value for them (multi-output
//    fusion: `tanh` computed once, stored for the backward pass, and consumed in one loop).
// MLIR's own pass fuses only producers with a single use.
void fuse_elementwise(mlir::ModuleOp module);

}  // namespace cjax::lower
