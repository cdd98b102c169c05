// A loop constant's cotangent summed step by step, whatever the loop's nesting. The transpose of
// a scan accumulates the cotangent of each constant it reads in a carry that starts at zero (as
// JAX's does), and the caller adds the total to what it had: `add_any acc (scan ... zeros ...)`.
// A scan split into nested scans and checkpointed ranges (passes/scan_schedules.h) therefore sums
// each chunk from zero and then adds the chunks, where the un-nested scan adds every step to one
// running sum: the same terms, grouped differently, so the gradients differ in the last bits.
//
// This pass hands the running sum to the scan that continues it: where `z = add_any x y` and `y`
// is a sum continued by a scan (a scan's accumulating carry, or such a carry inside a remat2's
// body, reached through further accumulating carries and add_any's), `y`'s sum starts from `x`:
// the zero it started from is replaced by `x`, or its first term t (a cotangent computed outside
// any scan) by `add_any x t`; a remat2 takes `x` as one more operand; `z` becomes `y`. Every value
// on that chain must be read only by the next link, so nothing else sees the changed partial sums.
// The result is the same sum, added in the order the un-nested scan adds it: a scheduled scan's
// gradient equals the plain scan's bit for bit on the interpreter.
//
// Printed programs stay JAX's (the vjp under a trace does not run this); the training step that
// runs a gradient on concrete arrays does (passes/pipeline.h).
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

Jaxpr sum_cotangents_in_order(const Jaxpr& program);

}  // namespace cjax
