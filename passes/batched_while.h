// A batched while loop (vmap's: its predicate bool[B...] is a prefix of every carry's shape) as an
// ordinary one, for back ends whose loops take a scalar condition: the loop runs while any
// predicate element is true, and its body recomputes the predicate and keeps each finished
// example's carries (a select_n), which is what the batched loop means.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

// `jaxpr` with every batched while (at any depth) rewritten; the same jaxpr when there is none.
Jaxpr unbatch_while_predicates(const Jaxpr& jaxpr);

}  // namespace cjax
