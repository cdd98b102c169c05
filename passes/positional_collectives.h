// psum/pmax/pmin over positional axes only (what vmap leaves of a collective over its own axis)
// as the reductions they are, for back ends that lower reductions and not collectives.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

// `jaxpr` with each such eqn (at any depth) replaced by one reduce_sum/max/min per operand; the
// same jaxpr when there is none. Collectives over named axes stay.
Jaxpr reduce_positional_collectives(const Jaxpr& jaxpr);

}  // namespace cjax
