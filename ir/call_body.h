// The body of a call-like eqn (jit, remat2, custom_jvp_call, ...; Primitive::call_body): what the
// interpreter runs, the CPU back end lowers inline, and the memory model and FLOP count walk.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

// The jaxpr a call-like primitive applies to its operands, or null: for a primitive that is not
// call-like, or params that hold no jaxpr under the primitive's body param.
const Jaxpr* call_body(const Primitive& prim, const Params& params);
const Jaxpr* call_body(const Eqn& eqn);

}  // namespace cjax
