// Common-subexpression elimination: an eqn identical to an earlier one (same primitive, same
// inputs, equal params) is dropped and its outputs replaced by the earlier eqn's.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

// optimization_barrier and device_put eqns are never merged: a barrier exists precisely to keep
// a recomputation (remat's prevent_cse) apart from the original.
Jaxpr cse(const Jaxpr& jaxpr);

}  // namespace cjax
