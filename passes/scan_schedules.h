// Checkpoint schedules for long scans: a pass that rewrites one `scan` eqn into nested `scan` and
// `remat2` eqns with the same inputs and outputs, so that reverse mode stores fewer carries and
// recomputes more. Everything downstream (vjp, print_saved_residuals, fwd-bwd, the memory model,
// the back end) sees an ordinary program JAX could run.
//
//   none          the scan as it is: its linearization stacks every step's residuals.
//   every_step    scan(checkpoint(body)): one carry (and x slice) saved per step, each step
//                 recomputed once in the backward pass. JAX users' idiom.
//   nested(k)     k levels of scans over chunks of about L^(1/k) steps, each chunk checkpointed
//                 (what Flax's remat_scan does): about k·L^(1/k) carries saved, each step
//                 computed k + 1 times.
//   binomial(s)   Griewank's revolve: s carries stored, split where his recursion is optimal
//                 (t = r·L - C(s+r, s-1) advances, r the least with C(s+r, s) >= L). The head of
//                 each range is checkpointed and recursed into with s snapshots, the tail with
//                 s - 1. The backward pass repeats between t - L + 1 and t steps.
//   memory_budget(bytes)   the schedule with the least recomputation whose modelled peak for the
//                 gradient fits (passes/memory/memory_model.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct ScanSchedule {
  enum class Kind { none, every_step, nested, binomial, memory_budget };
  Kind kind = Kind::none;
  int levels = 0;           // nested
  int snapshots = 0;        // binomial
  size_t budget_bytes = 0;  // memory_budget

  // The schedule as a user writes it: "none", "every_step", "nested(2)", "binomial(8)",
  // "memory_budget(1048576)".
  std::string str() const;
  bool operator==(const ScanSchedule&) const = default;
};

namespace scan_schedules {
inline ScanSchedule none() {
  return {};
}
inline ScanSchedule every_step() {
  return {.kind = ScanSchedule::Kind::every_step};
}
inline ScanSchedule nested(int levels) {
  return {.kind = ScanSchedule::Kind::nested, .levels = levels};
}
inline ScanSchedule binomial(int snapshots) {
  return {.kind = ScanSchedule::Kind::binomial, .snapshots = snapshots};
}
inline ScanSchedule memory_budget(size_t bytes) {
  return {.kind = ScanSchedule::Kind::memory_budget, .budget_bytes = bytes};
}
}  // namespace scan_schedules

// Parses what str() prints. Throws cjax::UsageError naming the valid forms.
ScanSchedule parse_scan_schedule(const std::string& text);

// `scan` (an eqn of that primitive) rewritten under `schedule`: a jaxpr over the eqn's inputs
// (consts, carries, xs) returning its outputs (carries, ys). Throws cjax::UsageError for a
// schedule out of range (levels or snapshots below 1, a binomial schedule nesting deeper than
// jaxprs may, a budget no schedule fits).
Jaxpr schedule_scan(const Eqn& scan, const ScanSchedule& schedule);

// `jaxpr` with each of its own scan eqns (not those inside other eqns' jaxprs) rewritten under
// `schedule`, what `cjax memory` compares.
Jaxpr schedule_scans(const Jaxpr& jaxpr, const ScanSchedule& schedule);

// The schedules `cjax memory` lists for a program whose longest scan has `length` steps:
// every_step, nested(2) and nested(3), and binomial(s) for s = 2, 4, 8 below the length.
std::vector<ScanSchedule> schedules_to_compare(int64_t length);

// Griewank's binomial counts: the least r with C(s + r, s) >= steps, and the forward steps that
// reversing `steps` steps with `snapshots` stored carries repeats (r·L - C(s + r, s - 1)).
int64_t binomial_repetitions(int64_t steps, int64_t snapshots);
int64_t binomial_extra_steps(int64_t steps, int64_t snapshots);

}  // namespace cjax
