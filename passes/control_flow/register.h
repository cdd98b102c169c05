// The pass rules of the control-flow primitives scan, cond and while.
#pragma once

#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// Registers the jvp, partial-eval and transpose rules of scan, cond and while.
void register_control_flow_rules();

// DCE of one scan / cond eqn whose outputs are used as marked (at least one is): the body keeps
// what the used outputs need (for scan, with a fixpoint over the carries), unused inputs and
// outputs are dropped. Other eqns are returned as they are.
Eqn control_flow_dce(const Eqn& eqn, const std::vector<bool>& used_outputs);

// Per-primitive parts (scan_rules.cc, cond_rules.cc, while_rules.cc).
void register_scan_rules();
void register_cond_rules();
void register_while_rules();
Eqn scan_dce(const Eqn& eqn, const std::vector<bool>& used_outputs);
Eqn cond_dce(const Eqn& eqn, const std::vector<bool>& used_outputs);

}  // namespace cjax
