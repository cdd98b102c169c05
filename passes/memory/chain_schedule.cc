#include "passes/memory/chain_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/errors.h"

namespace cjax::memory {

std::vector<size_t> chain_slot_counts(size_t depth) {
  std::vector<size_t> out;
  for (size_t s = 1; s < depth; s = s < 8 ? s + 1 : (s * 5 + 3) / 4) out.push_back(s);
  if (depth >= 2 && out.back() != depth - 1) out.push_back(depth - 1);
  return out;
}

std::vector<ChainSchedule> chain_schedules(const Jaxpr& body, const Chain& chain, size_t budget,
                                           size_t num_consts) {
  // The body as written first, then the most slots first: the cheapest schedules that fit bound
  // the others early (a schedule that cannot recompute less is not searched).
  std::vector<size_t> order{0};
  const std::vector<size_t> counts = chain_slot_counts(chain.depth);
  order.insert(order.end(), counts.rbegin(), counts.rend());
  std::vector<ChainSchedule> out;
  double best = HUGE_VAL;
  for (size_t slots : order) {
    ChainSchedule s;
    s.slots = slots;
    s.body = slots == 0 ? body : nest_chain(body, chain, slots);
    // The problem checkpoint(body) poses under vjp, as the policy will see it.
    s.problem = plan_problem(s.body, num_consts);
    const PlanProblem& p = s.problem;
    // A schedule's nested checkpoints recompute everything inside; the solver decides the outer
    // level (which snapshots the first sweep keeps).
    SearchInfo info;
    s.solution = try_solve_memory_budget(p.body, p.in_unknown, budget, slots > 0, &info, best);
    s.smallest_peak = info.smallest_peak;
    s.exact = info.exact;
    if (s.solution) best = std::min(best, s.solution->model.recompute_flops);
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const ChainSchedule& x, const ChainSchedule& y) {
    return x.slots < y.slots;
  });
  return out;
}

const ChainSchedule& pick_chain_schedule(const std::vector<ChainSchedule>& schedules,
                                         size_t budget) {
  const ChainSchedule* best = nullptr;
  size_t smallest = std::numeric_limits<size_t>::max();
  bool exact = true;
  for (const ChainSchedule& s : schedules) {
    if (s.smallest_peak < smallest) smallest = s.smallest_peak, exact = s.exact;
    if (!s.solution) continue;
    if (!best) {
      best = &s;
      continue;
    }
    const StepModel &m = s.solution->model, &b = best->solution->model;
    if (m.recompute_flops < b.recompute_flops ||
        (m.recompute_flops == b.recompute_flops && m.peak_bytes < b.peak_bytes))
      best = &s;
  }
  if (!best)
    throw InfeasibleBudget(
        budget, smallest,
        exact ? InfeasibleBudget::Search::exhaustive : InfeasibleBudget::Search::chain_schedules);
  return *best;
}

}  // namespace cjax::memory
