// Checkpoint schedules for chains of equal layers (Griewank's binomial "revolve" schedule).
//
// A per-value save set inside one checkpoint cannot express a binomial schedule (the backward
// remat2 recomputes all it recomputes before transposing), but nested checkpoints can. To reverse
// a segment of D steps with s snapshot slots: split at m, run the first m steps as a nested
// checkpoint (its output is the snapshot), reverse the last D-m steps with s-1 slots, then the
// first m with s. In forward step evaluations (reversing one step, its own vjp, is free):
//   t(1, s) = 0,  t(D, 0) = infinity for D > 1,  t(D, s) = min_m [m + t(D-m, s-1) + t(m, s)],
// whose optimum is Griewank's bound r*D - C(s+r, s+1), r the least with C(s+r, s) >= D: with s
// snapshots and r repetitions at most C(s+r, s) steps can be reversed.
// docs/auto-remat.md ("Chains") shows what policies::memory_budget makes of it.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax::memory {

inline constexpr size_t kUnreachable = std::numeric_limits<size_t>::max();

// t(D, s) above; kUnreachable when s == 0 and D > 1.
size_t revolve_cost(size_t steps, size_t slots);
// The m that attains t(D, s) (the smallest such); 0 for D == 1.
size_t revolve_split(size_t steps, size_t slots);
// Griewank's closed form r*D - C(s+r, s+1) (s >= 1).
size_t revolve_closed_form(size_t steps, size_t slots);
// C(s+r, s): the most steps s snapshots reverse with at most r evaluations of any step.
size_t revolve_max_steps(size_t slots, size_t repetitions);

// A split rule: given (steps, slots), where to split (1 <= m < steps).
using SplitRule = std::function<size_t(size_t, size_t)>;

// D >= 2 consecutive runs of `length` eqns of equal structure (same primitives, params and avals,
// reading the same positions of the previous run) in a checkpoint body, each reading exactly one
// value the previous run produced (the carry) besides the body's inputs and literals, and nothing
// else outside itself; only the carry of a run is read after it. Eqns before `first` and after
// the last run stay as they are.
struct Chain {
  size_t first = 0;        // index of the first eqn of the first run
  size_t length = 0;       // eqns per run (one layer)
  size_t depth = 0;        // D
  std::vector<Var> carry;  // D+1 values: carry[i] is what run i reads, carry[i+1] what it produces
};

// The longest chain of `body` (most runs; the shortest layer among those), or nullopt.
std::optional<Chain> find_chain(const Jaxpr& body);

// `body` with the chain's runs nested as checkpoints following the split tree of (D, slots):
// split at m = rule(D, slots), the first m runs become a remat2 eqn (policy None, prevent_cse
// True, as recursive_checkpoint writes them) holding their own tree for (m, slots), the other
// D-m follow inline with slots-1. Same signature and values as `body`. slots >= 1.
Jaxpr nest_chain(const Jaxpr& body, const Chain& chain, size_t slots,
                 const SplitRule& rule = revolve_split);

}  // namespace cjax::memory
