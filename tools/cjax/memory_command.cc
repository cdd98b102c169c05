#include "tools/cjax/memory_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <optional>

#include "ir/byte_size.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/memory/budget_plan.h"
#include "passes/memory/chain_schedule.h"
#include "passes/memory/memory_model.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/scan_schedules.h"
#include "passes/vjp.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/memory_plot.h"
#include "tools/cjax/name_checks.h"
#include "tools/cjax/source.h"

namespace cjax::cli {
namespace {

struct Row {
  std::string policy;
  memory::StepModel model;
  double solve_ms = -1;  // budget rows
  bool exact = false;
  std::optional<size_t> infeasible;  // a budget no save set fits: the smallest peak found
};

Row row(std::string policy, memory::StepModel model) {
  Row r;
  r.policy = std::move(policy);
  r.model = std::move(model);
  return r;
}

// "memory_budget(1.4 MiB)", or with the exact bytes when another budget rounds to the same text.
std::string budget_label(size_t budget, const std::vector<size_t>& all) {
  const std::string text = format_byte_size(budget);
  for (size_t other : all)
    if (other != budget && format_byte_size(other) == text)
      return fmt::format("memory_budget({} B)", budget);
  return fmt::format("memory_budget({})", text);
}

// The policies that need no names (the name policies join when --names is given). Offloading is
// left out: the model has one memory kind.
std::vector<std::string> table_policies(const AutodiffOptions& o) {
  std::vector<std::string> p = {"everything_saveable", "nothing_saveable", "dots_saveable",
                                "dots_with_no_batch_dims_saveable"};
  if (!o.names.empty())
    for (const char* n :
         {"save_anything_except_these_names", "save_any_names_but_these", "save_only_these_names"})
      p.emplace_back(n);
  return p;
}

std::string flops(double f) {
  if (f < 1e4) return fmt::format("{:.0f}", f);
  if (f < 1e7) return fmt::format("{:.1f} K", f / 1e3);
  if (f < 1e10) return fmt::format("{:.1f} M", f / 1e6);
  return fmt::format("{:.1f} G", f / 1e9);
}

// The smallest peak any nested schedule of `j`'s chain reaches (SIZE_MAX when `j` is no chain).
size_t smallest_chain_peak(const Jaxpr& j) {
  size_t best = std::numeric_limits<size_t>::max();
  if (!j.constvars.empty()) return best;
  const std::optional<memory::Chain> chain = memory::find_chain(j);
  if (!chain) return best;
  for (const memory::ChainSchedule& s : memory::chain_schedules(j, *chain, 0))
    if (s.smallest_peak > 0) best = std::min(best, s.smallest_peak);
  return best;
}

// The most steps of the program's own scan eqns (0 when it has none).
int64_t longest_scan(const Jaxpr& j) {
  int64_t steps = 0;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == "scan") steps = std::max(steps, e.params.get_int("length"));
  return steps;
}

}  // namespace

void check_memory_options(const MemoryOptions& mem) {
  for (const std::string& b : mem.budgets) parse_bytes(b);
}

int print_memory(const AutodiffOptions& opts, const MemoryOptions& mem, std::ostream& out,
                 std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    if (!opts.policy.empty() || !opts.budget.empty())
      throw UsageError("memory compares every policy: --policy and --budget do not apply");
    AutodiffOptions plain = opts;
    plain.names.clear();  // --names adds the name policies' rows here
    const Jaxpr j = prepare_program(plain, err).jaxpr;
    warn_about_unknown_names(describe(opts.src), j, opts.names, err);
    std::vector<Row> rows;
    rows.push_back(row("(no checkpoint)", memory::model_vjp(j)));
    for (const std::string& name : table_policies(opts))
      rows.push_back(row(name, memory::model_vjp(checkpoint_jaxpr(
                                   j, policies::by_name(name, opts.names, opts.offload_names)))));
    // A program with scans: its loops under each checkpoint schedule (passes/scan_schedules.h).
    if (const int64_t steps = longest_scan(j); steps > 1)
      for (const ScanSchedule& s : schedules_to_compare(steps))
        rows.push_back(row("scan " + s.str(), memory::model_vjp(schedule_scans(j, s))));

    std::vector<size_t> budgets;
    for (const std::string& b : mem.budgets) budgets.push_back(parse_bytes(b));
    std::vector<memory::BudgetSolution> front;
    if (budgets.empty() || !mem.plot.empty()) {
      memory::PlanProblem p = memory::plan_problem(j);
      front = memory::pareto_frontier(p.body, p.in_unknown);
    }
    if (budgets.empty()) {  // the ends and the middle of the trade-off curve
      if (!front.empty()) {
        // A chain of equal layers reaches lower peaks nested as checkpoints (chain.h): the
        // curve then starts at the smallest peak of its schedules.
        const size_t front_low = front.front().model.peak_bytes;
        const size_t low = std::min(front_low, smallest_chain_peak(j));
        const size_t high = front.back().model.peak_bytes;
        budgets.push_back(low);
        if (low < front_low)
          budgets.push_back(low + (high - low) / 2);
        else if (front.size() > 2)
          budgets.push_back(front[front.size() / 2].model.peak_bytes);
        if (low < high) budgets.push_back(high);
      }
    }
    for (size_t b : budgets) {
      Row r = row(budget_label(b, budgets), {});
      try {
        const Jaxpr checkpointed = checkpoint_jaxpr(j, policies::memory_budget(b));
        r.model = memory::model_vjp(checkpointed);
        if (const memory::MemoryPlan* plan = memory::memory_plan_of(checkpointed)) {
          r.solve_ms = plan->solution.solve_ms;
          r.exact = plan->solution.exact;
        }
      } catch (const memory::InfeasibleBudget& e) {
        r.infeasible = e.smallest_peak;  // a row that says so; the other budgets still print
      }
      rows.push_back(std::move(r));
    }

    if (!mem.plot.empty()) {
      std::vector<PlotSeries> series;
      for (const Row& r : rows)
        if (!r.infeasible)
          series.push_back({r.policy, r.model.live, r.model.boundary, r.model.peak_bytes,
                            r.model.recompute_flops});
      std::vector<FrontierPoint> curve;
      for (const memory::BudgetSolution& f : front)
        curve.push_back({f.model.recompute_flops, f.model.peak_bytes});
      write_memory_plot(mem.plot, describe(opts.src), series, curve);
    }

    if (mem.json) {
      nlohmann::json doc = nlohmann::json::array();
      for (const Row& r : rows) {
        if (r.infeasible) {
          doc.push_back(
              {{"policy", r.policy}, {"feasible", false}, {"smallest_peak_bytes", *r.infeasible}});
          continue;
        }
        nlohmann::json row = {{"policy", r.policy},
                              {"residual_bytes", r.model.residual_bytes},
                              {"peak_bytes", r.model.peak_bytes},
                              {"recompute_flops", r.model.recompute_flops},
                              {"argument_bytes", r.model.argument_bytes}};
        if (r.solve_ms >= 0) {
          row["exact"] = r.exact;
          if (mem.timing) row["solve_ms"] = r.solve_ms;
        }
        doc.push_back(row);
      }
      out << doc.dump(2) << "\n";
      return kOk;
    }
    size_t width = 6;
    for (const Row& r : rows) width = std::max(width, r.policy.size());
    out << fmt::format("{:<{}}  {:>10}  {:>10}  {:>15}{}\n", "policy", width, "residuals", "peak",
                       "recompute FLOPs", mem.timing ? "  solve" : "");
    for (const Row& r : rows) {
      if (r.infeasible) {
        out << fmt::format("{:<{}}  infeasible: the smallest peak found is {}\n", r.policy, width,
                           format_byte_size(*r.infeasible));
        continue;
      }
      out << fmt::format("{:<{}}  {:>10}  {:>10}  {:>15}", r.policy, width,
                         format_byte_size(r.model.residual_bytes),
                         format_byte_size(r.model.peak_bytes), flops(r.model.recompute_flops));
      if (mem.timing && r.solve_ms >= 0)
        out << fmt::format("  {:.1f} ms{}", r.solve_ms, r.exact ? "" : " (greedy)");
      out << "\n";
    }
    out << fmt::format("arguments: {} (in every peak)\n",
                       format_byte_size(rows.front().model.argument_bytes));
    return kOk;
  });
}

}  // namespace cjax::cli
