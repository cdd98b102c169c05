// The jaxpr verifier: every variable is defined exactly once before it is used (constvars and
// invars count as definitions; nested jaxprs are their own scope), and every eqn of a known
// primitive has the output avals its shape rule gives. Opaque eqns are checked for scoping only.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

// Throws cjax::VerifyError; the message names the eqn (its index, primitive and printed form).
void verify(const Jaxpr& jaxpr);

}  // namespace cjax
