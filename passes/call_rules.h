// The jvp and transpose rules shared by call-like primitives whose body is a `jaxpr` param (jit,
// remat2): the new eqn is the same primitive with the same params over the transformed body.
#pragma once

#include <span>

#include "passes/jvp.h"
#include "passes/transpose.h"

namespace cjax {

// A jvp'd call's outputs, (primal outputs..., nonzero tangent outputs...), as the rule's result.
JvpFullResult split_jvp_outputs(const std::vector<Var>& outs, const std::vector<bool>& out_nonzero);

// jvp: the call of the jvp'd body over (primals..., nonzero tangents...).
JvpFullResult call_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                       std::span<const Tangent> tangents);

// transpose: the call of the transposed body over (non-linear inputs..., nonzero cotangents...).
std::vector<Cotangent> call_transpose(const TransposeRuleArgs& a);

}  // namespace cjax
