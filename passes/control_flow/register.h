// The pass rules of the control-flow primitives scan, cond and while.
#pragma once

#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// Registers the jvp, partial-eval and transpose rules of scan, cond and while.
void register_control_flow_rules();

// Per-primitive parts (scan_rules.cc, cond_rules.cc, while_rules.cc).
void register_scan_rules();
void register_cond_rules();
void register_while_rules();

}  // namespace cjax
