// The memory model of a training step: a vjp's forward program, then its backward program, run
// the way cjax's reference interpreter runs them (runtime/interpreter.cc). It predicts the bytes
// live after every eqn, the peak, the residual bytes and the FLOPs the backward program spends
// recomputing primal values. docs/auto-remat.md explains the rules; in short:
// - the arguments are allocated by the caller before the step and live throughout;
// - every eqn allocates its outputs (name, optimization_barrier, device_put and stop_gradient
//   forward their operand instead, and calls return their body's buffers), and a literal operand
//   is materialized for the duration of its eqn;
// - a value is freed after the last eqn that reads it, unless the program returns it;
// - the forward program's outputs (primal outputs and residuals) are held by the caller: the
//   residuals until the backward program has finished (eval_jaxpr borrows its arguments), the
//   primal outputs to the end; the output cotangents are allocated between the two programs;
// - constants captured by a program are not counted (they belong to the program).
// Buffers are counted by their exact size (shape x itemsize), as the tracking allocator counts.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax::memory {

struct StepModel {
  size_t argument_bytes = 0;        // the forward program's inputs
  size_t residual_bytes = 0;        // residuals that are not arguments: memory the step keeps
  size_t residual_total_bytes = 0;  // every residual, arguments included (`residuals --bytes`)
  size_t num_residuals = 0;
  size_t peak_bytes = 0;  // the most bytes live at once, arguments included
  size_t forward_peak_bytes = 0, backward_peak_bytes = 0;
  // Every byte the step allocates, arguments included, as if nothing were freed: a bound on any
  // schedule of the same buffers (the compiled back end's peak stays below it; see
  // docs/auto-remat.md).
  size_t allocated_bytes = 0;
  double forward_flops = 0, backward_flops = 0;
  // FLOPs of backward eqns that read no cotangent (directly or through other eqns): primal work
  // the backward program repeats.
  double recompute_flops = 0;
  // The most bytes live while each eqn runs, the bodies of calls (remat2, pjit, ...) expanded
  // into their eqns: the forward program's, then the backward program's; `boundary` is the index
  // of the first backward point.
  std::vector<size_t> live;
  size_t boundary = 0;
};

// `fwd`: (args...) -> (primal outs..., residuals...); `bwd`: (residuals..., one cotangent per
// primal out...) -> (input cotangents...), as vjp_jaxpr returns them.
StepModel model_step(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals);

// model_step of vjp_jaxpr(jaxpr).
StepModel model_vjp(const Jaxpr& jaxpr);

// The most bytes live while the interpreter runs `jaxpr` alone on caller-held arguments,
// arguments included: the model of one eval_jaxpr call.
size_t model_eval_peak(const Jaxpr& jaxpr);

}  // namespace cjax::memory
