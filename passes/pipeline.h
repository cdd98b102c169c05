// The two pass pipelines, each written once and in order; every caller goes through them (grad,
// vjp and jit on concrete arrays, the CLI, the benchmarks, the back ends):
//
//   training_step:        masked vjp -> dce of the gradients not asked for -> loop constants'
//                         cotangents summed in step order -> residual recomputation
//   prepare_for_lowering: inline calls -> expand remat -> drop forwarding eqns -> fold transposed
//                         dots (in every body) -> cheap values recomputed at their late readers
//                         -> a scan's cheap residuals recomputed by the scan that differentiates it
//
// With CJAX_DUMP_PASSES set to anything but 0, each step prints its name and the jaxpr it made
// to standard error (docs/architecture.md, "Pipelines").
#pragma once

#include <cstddef>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct StepOptions {
  // Which outputs get a cotangent (vjp_jaxpr's mask); empty: every output.
  std::vector<bool> out_differentiated;
  // Which gradients the backward program computes, one flag per input; empty: every one.
  std::vector<bool> wrt;
  // Recompute cheap residuals in the backward program, as compiled code runs the step
  // (passes/recompute_residuals.h); off, the programs are JAX's.
  bool recompute_cheap_residuals = true;
  // Sum a loop constant's cotangent step by step through nested scans, as the un-nested scan
  // does (passes/cotangent_sums.h); off, the backward program is JAX's.
  bool sum_cotangents_in_order = true;
};

struct TrainingStep {
  Jaxpr fwd;  // primals -> (outputs..., residuals...)
  Jaxpr bwd;  // (residuals..., cotangents...) -> gradients
  size_t num_residuals = 0;
  size_t recomputed_residuals = 0;  // residuals the backward program recomputes
};

TrainingStep training_step(const Jaxpr& f, const StepOptions& options = {});

struct PrepareOptions {
  bool keep_memory_transfers = false;  // see drop_forwarding_eqns
  // remat2 calls of a body met at several places (passes/repeated_calls.h) stay calls, for a back
  // end that compiles such a body once, as a function.
  bool keep_repeated_calls = false;
};

// What the back ends compile: calls at the top level inlined (a jit body with consts stays a call,
// lowered whole), remat2 expanded, values passed through a barrier or a name read from where
// they were computed, batched while loops given a scalar condition (passes/batched_while.h),
// transposed dots folded in every body, and cheap values recomputed at their late readers instead
// of held (passes/rematerialize.h; call bodies inlined at every depth for it).
Jaxpr prepare_for_lowering(const Jaxpr& program, const PrepareOptions& options = {});

}  // namespace cjax
