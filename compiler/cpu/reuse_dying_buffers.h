// Internal to compiler/cpu/: elementwise loops that write their result over an operand they are
// the last to read.
#pragma once

#include <mlir/IR/BuiltinOps.h>

namespace cjax::lower {

// For each elementwise loop nest (a linalg.generic on buffers, every loop parallel) whose result
// goes to a fresh buffer, and which is the last reader of an operand buffer of the same type,
// read at the same index it writes, that the function allocated and frees right there: the loop
// writes its result over that operand instead, and the fresh buffer is never allocated.
//
// Why: the backward pass of a GELU MLP multiplies the GELU's cotangent by its derivative into a
// third array of the hidden size while the pre-activation is still held; writing over the
// cotangent holds one [B, T, 4D] array less at the step's peak. Runs on buffers, after
// free_after_last_use (which has put each free after its buffer's last reader), so it needs no
// copy anywhere: where the operand is not the function's own or is read later, nothing changes.
void reuse_dying_buffers(mlir::ModuleOp module);

}  // namespace cjax::lower
