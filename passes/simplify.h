// Algebraic simplification: drops eqns that compute their input unchanged (x*1, x+0, x-0,
// neg(neg x), identity conversions, transposes, reshapes and broadcasts), then DCE.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

Jaxpr simplify(const Jaxpr& jaxpr);

}  // namespace cjax
