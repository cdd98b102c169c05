// Cheap residuals of a scan recomputed by the scan that differentiates it. A gradient of a scan
// inside one program (jit of value_and_grad) is a forward scan that stacks its body's residuals,
// one slice per step, and a backward scan that reads those stacks slice by slice: with a tanh
// GELU in the body, six arrays the size of the hidden layer per step, three of them a few
// instructions away from the others. recompute_cheap_residuals (recompute_residuals.h) makes
// that trade between a vjp's two programs; this pass makes it between the two scans of one
// program: a stacked residual read only by the backward scan, and only in elementwise eqns
// there, is dropped from the forward scan and recomputed inside the backward scan's body from
// the residuals kept, the forward scan's constants (passed to the backward scan as constants)
// and its scanned-over inputs (passed as scanned-over inputs: slice i of either scan is step i,
// whichever way each runs). A recomputation that would need the forward scan's carry is not
// made. The program computes the same values; less lives between the two scans.
#pragma once

#include "ir/jaxpr.h"

namespace cjax {

Jaxpr recompute_scan_residuals(const Jaxpr& program);

}  // namespace cjax
