// Differentiating calls nested d deep: vjp of d nested jits, and of d nested scans (length 1),
// each level applying sin around the call below it. The passes' work should grow linearly with d
// (Google Benchmark fits the complexity: `BigO` near N); it grew with d^2 while every level of
// partial evaluation and transposition re-walked the whole nest below it (issue 18: grad of 400
// nested jits took 6.1 s, of 200 nested scans 76 s). Build with -DCJAX_BUILD_BENCH=ON; run
// build/bench/bench_nesting.
#include <benchmark/benchmark.h>

#include "cjax/api.h"
#include "passes/vjp.h"
#include "tests/passes/nested_calls.h"

namespace {

using cjax::Array;

void BM_vjp_nested_jits(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  const cjax::Jaxpr j = cjax::testing::nested_jits(depth, cjax::DType::f32);
  for (auto _ : state) benchmark::DoNotOptimize(cjax::vjp_jaxpr(j));
  state.SetComplexityN(depth);
}

void BM_vjp_nested_scans(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  const cjax::Jaxpr j = cjax::make_jaxpr([depth](const Array& x) {
    return cjax::numpy::sum(cjax::testing::nested_scans(x, depth));
  })(cjax::ShapeDtype{cjax::DType::f32, {3}});
  for (auto _ : state) benchmark::DoNotOptimize(cjax::vjp_jaxpr(j));
  state.SetComplexityN(depth);
}

}  // namespace

BENCHMARK(BM_vjp_nested_jits)
    ->RangeMultiplier(2)
    ->Range(50, 800)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
// Nested scans stack the residuals of every level below them: the program itself grows with d^2
// (a level-k residual has rank k), so d^2 or more is their floor.
BENCHMARK(BM_vjp_nested_scans)
    ->RangeMultiplier(2)
    ->Range(8, 64)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK_MAIN();
