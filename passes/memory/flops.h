// FLOPs of a jaxpr, as the memory report counts them, from each primitive's Primitive::flop_count
// trait (ir/rules/): 2*M*N*K*batch for a dot_general (one
// multiply and one add per term), the input's element count for a reduction, zero for an op that
// only moves or relabels data (reshape, transpose, broadcast, slicing, copies, names), and the
// output's element count for everything else (elementwise arithmetic, comparisons, conversions).
// Calls count their body; a scan counts `length` bodies; a while counts its body and condition
// once (the trip count is not known statically); a cond counts its most expensive branch.
#pragma once

#include "ir/jaxpr.h"

namespace cjax::memory {

double eqn_flops(const Eqn& eqn);
double jaxpr_flops(const Jaxpr& jaxpr);

}  // namespace cjax::memory
