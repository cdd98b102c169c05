// Throughput of the front end and the passes on an N-layer MLP (dot_general, add, tanh per
// layer, then a squared-error loss): tracing with make_jaxpr, vjp, checkpoint + vjp, printing
// and parsing. Counters report eqns per second. Build with -DCJAX_BUILD_BENCH=ON; run
// build/bench/bench_tracing. (JAX, the peer, needs Python with jax installed; see bench/README.md.)
#include <benchmark/benchmark.h>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"

namespace {

namespace np = cjax::numpy;
using cjax::Array;

Array mlp_loss(const std::vector<Array>& Ws, const Array& x) {
  Array h = x;
  for (const Array& W : Ws) {
    Array z = np::matmul(h, W);
    h = np::tanh(z + 1.0);
  }
  return np::sum(np::power(h, 2));
}

cjax::Jaxpr trace_mlp(int layers) {
  std::vector<Array> Ws(static_cast<size_t>(layers),
                        Array(cjax::ShapeDtype{cjax::DType::f32, {64, 64}}));
  return cjax::make_jaxpr(mlp_loss, {"Ws", "x"})(Ws, cjax::ShapeDtype{cjax::DType::f32, {8, 64}});
}

void set_rate(benchmark::State& state, size_t eqns) {
  state.counters["eqns"] = static_cast<double>(eqns);
  state.counters["eqns_per_s"] =
      benchmark::Counter(static_cast<double>(eqns), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_make_jaxpr(benchmark::State& state) {
  size_t eqns = 0;
  for (auto _ : state) eqns = trace_mlp(static_cast<int>(state.range(0))).eqns.size();
  set_rate(state, eqns);
}

void BM_vjp(benchmark::State& state) {
  cjax::Jaxpr j = trace_mlp(static_cast<int>(state.range(0)));
  size_t eqns = 0;
  for (auto _ : state) {
    cjax::VjpResult r = cjax::vjp_jaxpr(j);
    eqns = r.fwd.eqns.size() + r.bwd.eqns.size();
  }
  set_rate(state, eqns);
}

void BM_checkpoint_vjp(benchmark::State& state) {
  cjax::Jaxpr j = cjax::checkpoint_jaxpr(trace_mlp(static_cast<int>(state.range(0))),
                                         cjax::policies::dots_with_no_batch_dims_saveable());
  size_t eqns = 0;
  for (auto _ : state) {
    cjax::VjpResult r = cjax::vjp_jaxpr(j);
    eqns = r.fwd.eqns.size() + r.bwd.eqns.size();
  }
  set_rate(state, eqns);
}

void BM_print(benchmark::State& state) {
  cjax::Jaxpr j = trace_mlp(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(cjax::to_string(j));
  set_rate(state, j.eqns.size());
}

void BM_parse(benchmark::State& state) {
  cjax::Jaxpr j = trace_mlp(static_cast<int>(state.range(0)));
  std::string text = cjax::to_string(j);
  for (auto _ : state) benchmark::DoNotOptimize(cjax::parse_jaxpr(text));
  set_rate(state, j.eqns.size());
}

}  // namespace

BENCHMARK(BM_make_jaxpr)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_vjp)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_checkpoint_vjp)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_print)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_parse)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
