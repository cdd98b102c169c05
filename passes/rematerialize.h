// Cheap values recomputed where they are read, so that a compiled program does not hold them.
//
// A value made by a few elementwise eqns (a GELU's tanh, 1 - tanh, 3 x^2; a layer norm's
// centred input times its scale; the zeros a `where` broadcasts) is often read twice: once right
// away, and once much later, by the backward half of the same program. Kept, it stays in memory
// across everything in between. A checkpointed transformer layer's backward pass recomputes the
// layer, then differentiates it: its GELU alone left five [B, T, 4D] arrays alive across the MLP's
// backward, where one (the pre-activation) suffices. XLA's fusion recomputes such producers in
// every consumer; this pass does the same at the jaxpr level, for the back ends.
//
// For every reader of a cheap value that comes after its first reader and a loop nest (a
// product, a reduction, a loop: anything not cheap, which the value would be held across), the
// pass places a copy of the value's cone of cheap eqns just before it, when the cone's inputs
// are alive there
// anyway (arguments, values read at or after that point, scalars and arrays of at most
// kSmallBytes): the copy extends no lifetime, the original then lives only up to its first
// reader, and the copy fuses into its reader's loop when that reader is elementwise. The values
// computed are the same, eqn for eqn; only when they are computed changes.
//
// Call bodies (jit, remat2, ...) are inlined first, as the back end lowers them inline, except
// those it compiles once as functions (passes/repeated_calls.h), whose bodies are rewritten
// alike; loop and branch bodies are rewritten on their own.
#pragma once

#include <cstddef>

#include "ir/jaxpr.h"

namespace cjax {

struct RematerializeOptions {
  // Leave call-like eqns whose bodies passes/repeated_calls.h finds repeated as calls.
  bool keep_repeated_calls = false;
  // Values smaller than this are not worth a copy.
  size_t min_bytes = size_t{64} << 10;
};

// Inputs of a copied cone this small may be kept alive longer than before.
inline constexpr size_t kSmallBytes = size_t{64} << 10;
// At most this many eqns are copied for one reader, and at most kMaxStoredCopyEqns for a reader
// that is not elementwise (the copy is then stored, not fused into the reader's loop).
inline constexpr size_t kMaxCopiedEqns = 24;
inline constexpr size_t kMaxStoredCopyEqns = 4;

Jaxpr rematerialize_cheap_values(const Jaxpr& program, const RematerializeOptions& options = {});

}  // namespace cjax
