#include "compiler/cpu/parallel_loops.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/SCF/Utils/Utils.h>
#include <mlir/Dialect/Utils/StaticValueUtils.h>
#include <mlir/IR/IRMapping.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "ir/errors.h"

namespace cjax::lower {
namespace {

// The trip counts of each dimension, or nothing when a bound or step is not a constant.
std::optional<std::vector<int64_t>> trip_counts(mlir::scf::ParallelOp op) {
  std::vector<int64_t> trips;
  for (auto [lb, ub, step] : llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep())) {
    auto l = mlir::getConstantIntValue(lb), u = mlir::getConstantIntValue(ub),
         st = mlir::getConstantIntValue(step);
    if (!l || !u || !st || *st <= 0) return std::nullopt;
    trips.push_back(std::max<int64_t>(0, (*u - *l + *st - 1) / *st));
  }
  return trips;
}

// The iterations of the deepest nest of scf.for loops in `block` (a reduction's loops inside a
// parallel loop's body), 1 when there is none; loops without constant bounds count once.
int64_t nested_iterations(mlir::Block& block) {
  int64_t most = 1;
  for (mlir::Operation& op : block) {
    int64_t here = 1;
    if (auto loop = mlir::dyn_cast<mlir::scf::ForOp>(op)) {
      auto trips =
          mlir::constantTripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      here = trips.value_or(1);
    }
    int64_t inner = 1;
    for (mlir::Region& region : op.getRegions())
      for (mlir::Block& b : region) inner = std::max(inner, nested_iterations(b));
    most = std::max(most, here * inner);
  }
  return most;
}

// Clones `op`'s body (its terminator aside) at `b`'s insertion point, with `ivs` for its
// induction variables.
void clone_body(mlir::OpBuilder& b, mlir::scf::ParallelOp op, mlir::ValueRange ivs) {
  mlir::IRMapping map;
  map.map(op.getInductionVars(), ivs);
  for (mlir::Operation& inner : op.getBody()->without_terminator()) b.clone(inner, map);
}

void sequentialize(mlir::scf::ParallelOp op) {
  mlir::OpBuilder b(op);
  mlir::scf::buildLoopNest(b, op.getLoc(), op.getLowerBound(), op.getUpperBound(), op.getStep(),
                           [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
                             clone_body(nested, op, ivs);
                           });
  op.erase();
}

// Rewrites `op` to step over its innermost dimension `chunk` iterations at a time, each chunk an
// scf.for (the last one shorter when `chunk` does not divide the dimension's trip count).
void chunk_innermost(mlir::scf::ParallelOp op, int64_t chunk, int64_t innermost_trips) {
  mlir::OpBuilder b(op);
  const mlir::Location loc = op.getLoc();
  const size_t last = op.getNumLoops() - 1;
  const mlir::Value step = op.getStep()[last], ub = op.getUpperBound()[last];
  std::vector<mlir::Value> steps(op.getStep().begin(), op.getStep().end());
  steps[last] = b.create<mlir::arith::MulIOp>(
      loc, step, b.create<mlir::arith::ConstantIndexOp>(loc, chunk).getResult());
  const bool ragged = innermost_trips % chunk != 0;
  b.create<mlir::scf::ParallelOp>(
      loc, op.getLowerBound(), op.getUpperBound(), steps,
      [&](mlir::OpBuilder& outer, mlir::Location, mlir::ValueRange ivs) {
        mlir::Value start = ivs[last];
        mlir::Value end = outer.create<mlir::arith::AddIOp>(loc, start, steps[last]);
        if (ragged) end = outer.create<mlir::arith::MinSIOp>(loc, end, ub);
        outer.create<mlir::scf::ForOp>(
            loc, start, end, step, mlir::ValueRange{},
            [&](mlir::OpBuilder& inner, mlir::Location, mlir::Value iv, mlir::ValueRange) {
              std::vector<mlir::Value> all(ivs.begin(), ivs.end());
              all[last] = iv;
              clone_body(inner, op, all);
              inner.create<mlir::scf::YieldOp>(loc);
            });
      });
  op.erase();
}

}  // namespace

void shape_parallel_loops(mlir::ModuleOp module, int64_t min_parallel, int64_t chunk,
                          size_t max_parallel) {
  std::vector<mlir::scf::ParallelOp> loops;  // inner loops before the loops around them
  module.walk([&](mlir::scf::ParallelOp op) {
    // Loops with reductions are left alone (linalg emits those with their reduction dims as
    // scf.for already).
    if (op.getNumReductions() == 0) loops.push_back(op);
  });
  // The iterations of `op`'s nest: its own, times those of the scf.for nest in its body (a
  // reduction's nest does those per parallel iteration). Nothing for non-constant bounds.
  struct Work {
    std::vector<int64_t> trips;
    int64_t inner = 1, total = 0;
  };
  auto work_of = [](mlir::scf::ParallelOp op) -> std::optional<Work> {
    auto trips = trip_counts(op);
    if (!trips) return std::nullopt;
    int64_t parallel = 1;
    for (int64_t t : *trips) parallel *= t;
    const int64_t inner = nested_iterations(*op.getBody());
    return Work{*trips, inner, parallel < 2 ? 0 : parallel * inner};
  };
  // The long loops with the most work keep their threads (the first in program order among
  // equals), chosen before any rewrite.
  std::vector<std::pair<int64_t, size_t>> long_loops;  // (work, index in `loops`)
  for (size_t k = 0; k < loops.size(); ++k)
    if (auto w = work_of(loops[k]); w && w->total >= min_parallel)
      long_loops.push_back({w->total, k});
  std::stable_sort(long_loops.begin(), long_loops.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<bool> keeps_threads(loops.size(), false);
  for (size_t k = 0; k < long_loops.size() && k < max_parallel; ++k)
    keeps_threads[long_loops[k].second] = true;
  // Rewritten inner loops first, as walked: rewriting a loop clones its body, with the loops
  // inside it already in their final form, and erases it.
  for (size_t k = 0; k < loops.size(); ++k) {
    const std::optional<Work> w = work_of(loops[k]);
    if (!w) continue;
    if (!keeps_threads[k] || w->total < min_parallel)
      sequentialize(loops[k]);
    else if (w->trips.back() > 1)
      chunk_innermost(loops[k], std::clamp<int64_t>(chunk / w->inner, 1, w->trips.back()),
                      w->trips.back());
  }
}

size_t max_parallel_loops() {
  const char* v = std::getenv(kMaxParallelLoopsVariable);
  if (!v || !*v) return kDefaultMaxParallelLoops;
  size_t n = 0;
  const auto [end, ec] = std::from_chars(v, v + std::strlen(v), n);
  if (ec != std::errc() || *end != '\0')
    throw UsageError(fmt::format("{}={}: not a count of loops (0 runs every loop on one thread)",
                                 kMaxParallelLoopsVariable, v));
  return n;
}

}  // namespace cjax::lower
