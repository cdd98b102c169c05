// Internal to compiler/cpu/: a loop's carry updated in its own buffer.
#pragma once

#include <mlir/IR/BuiltinOps.h>

namespace cjax::lower {

// On tensors, before bufferization: an elementwise loop nest (a linalg.generic, every loop
// parallel, one result written to a fresh tensor) that is the last reader, in its block, of a
// loop's carry (an scf.for iteration argument of the result's type, read at the index it
// writes) writes its result over that carry instead; so does the next such loop over that
// result, and so on. One-shot bufferization then keeps the carry in one buffer from iteration to
// iteration (where it finds a conflict, it copies, and the program is as before).
//
// Why: a backward scan's carry (the cotangent of the layer's input) is read by the layer's
// backward and then summed with the gradients of its two residual branches; with each sum in a
// fresh buffer, a second carry-sized buffer is live at the layer's peak.
void carry_in_place(mlir::ModuleOp module);

}  // namespace cjax::lower
