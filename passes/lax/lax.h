// The one lax library: the ops JAX's lax module offers, written once as templates over any
// Emitter (passes/lax/emitter.h), so that the front end's cjax::lax (over cjax::Array, staging into
// the trace) and the autodiff rules (over Atoms, emitting into a JaxprBuilder) bind the same
// params and skip the same eqns as JAX. Operands are evaluated by the caller, left to right as in
// JAX: a rule names its intermediate values instead of nesting calls, because C++ leaves the order
// of argument evaluation unspecified.
#pragma once

#include "passes/lax/collectives.h"
#include "passes/lax/dot.h"
#include "passes/lax/elementwise.h"
#include "passes/lax/emitter.h"
#include "passes/lax/gather.h"
#include "passes/lax/reductions.h"
#include "passes/lax/slicing.h"
#include "passes/lax/structural.h"
