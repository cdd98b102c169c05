// A jaxpr-to-jaxpr pass run before lowering (prepare_for_lowering, passes/pipeline.h): `transpose`
// of a `dot_general` result that swaps the lhs and rhs free dimensions becomes the dot_general of
// the swapped operands, (A B)^T = B^T A^T. JAX's backward programs are full of these (the cotangent
// of a weight comes out of a dot as W^T and is transposed back); done literally, the transpose is a
// cache-hostile strided copy of the whole weight matrix. Folded, BLAS writes the layout wanted.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

// In `jaxpr` and in every body below it (calls, loops, branches).
Jaxpr fold_transposed_dots(const Jaxpr& jaxpr);

}  // namespace cjax
