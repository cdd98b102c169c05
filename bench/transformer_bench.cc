// Issue 20's workload: a transformer's training step, `jit(value_and_grad(loss))` with respect to
// its 15 weight arrays, at two sizes (bench/transformer_model.h). In one run, for each size: the
// cached jit call from C++ against the executable it runs (paired in one loop), the interpreter,
// the first call (trace, differentiate, compile) with the persistent compilation cache off, and
// the first call of a fresh jit object that finds the compiled code in that cache (what a second
// process pays before it starts running).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "bench/transformer_model.h"
#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"
#include "compiler/cpu/executable.h"
#include "runtime/blas_dot.h"

namespace cjax::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

const TransformerSize& size_of(const benchmark::State& state) {
  return state.range(0) == 0 ? kSmall : kLarger;
}

struct Workload {
  TransformerParams params;
  Array tokens, labels;
};

Workload workload(const TransformerSize& s) {
  return {init_transformer(s, 1), random_tokens(s, 2), random_tokens(s, 3)};
}

auto make_step(const TransformerSize& s) {
  auto loss = [&s](const TransformerParams& p, const Array& tokens, const Array& labels) {
    return transformer_loss(s, p, tokens, labels);
  };
  return jit(value_and_grad(loss, argnums<0>));
}
using Step = decltype(make_step(kSmall));

// Points the persistent compilation cache at a fresh folder (so the first call compiles), or
// turns it off.
void use_cache_dir(const std::string& dir) {
  setenv("CJAX_CACHE_DIR", dir.c_str(), 1);
}

std::string fresh_cache_dir(const TransformerSize& s) {
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("cjax-bench-cache-{}-{}", s.name, getpid());
  std::filesystem::remove_all(dir);
  return dir.string();
}

// The first call of a new jit object on a new back end (whose in-memory cache is empty), in ms.
double first_call_ms(const TransformerSize& s, const Workload& w) {
  set_backend(std::make_shared<CpuBackend>());
  Step step = make_step(s);
  const auto t0 = Clock::now();
  benchmark::DoNotOptimize(step(w.params, w.tokens, w.labels));
  return ms_since(t0);
}

// The cached call against the executable alone, paired in one loop; the first calls and the
// interpreter once per size.
void BM_transformer_step(benchmark::State& state) {
  const TransformerSize& s = size_of(state);
  const Workload w = workload(s);
  // Measured once per size (Google Benchmark calls this function again to size its loop).
  struct FirstCalls {
    double cold_ms, fill_ms, warm_ms;
  };
  static std::map<std::string, FirstCalls> first;
  if (!first.count(s.name)) {
    const std::string dir = fresh_cache_dir(s);
    use_cache_dir("off");
    const double cold = first_call_ms(s, w);  // no persistent cache: traces and compiles
    use_cache_dir(dir);
    const double fill = first_call_ms(s, w);  // compiles and fills the cache
    const double warm = first_call_ms(s, w);  // finds the compiled code in the cache
    std::filesystem::remove_all(dir);
    first[s.name] = {cold, fill, warm};
  }

  Step step = make_step(s);
  benchmark::DoNotOptimize(step(w.params, w.tokens, w.labels));
  auto loss = [&s](const TransformerParams& p, const Array& tokens, const Array& labels) {
    return transformer_loss(s, p, tokens, labels);
  };
  const Jaxpr j = make_jaxpr(value_and_grad(loss, argnums<0>))(w.params, w.tokens, w.labels);
  if (!j.constvars.empty()) {
    state.SkipWithError("the step captured constants; the executable alone cannot run it");
    return;
  }
  const auto exe = lower::compile(j, "transformer_step");
  std::vector<runtime::Buffer> in;
  for (const Array& leaf : tree_flatten(w.params).leaves) in.push_back(leaf.buffer());
  in.push_back(w.tokens.buffer());
  in.push_back(w.labels.buffer());

  double interp_ms = 0;
  {
    UseInterpreter interpreter;
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(eval_jaxpr(j, {}, [&] {
      std::vector<Array> a = tree_flatten(w.params).leaves;
      a.push_back(w.tokens);
      a.push_back(w.labels);
      return a;
    }()));
    interp_ms = ms_since(t0);
  }

  // value_and_grad without jit, on concrete arrays: traced and differentiated on each call, as
  // JAX's is; the programs it runs come from the back end's cache.
  double grad_ms = 0;
  {
    auto grad_step = value_and_grad(loss, argnums<0>);
    benchmark::DoNotOptimize(grad_step(w.params, w.tokens, w.labels));
    const int reps = 5;
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i)
      benchmark::DoNotOptimize(grad_step(w.params, w.tokens, w.labels));
    grad_ms = ms_since(t0) / reps;
  }

  double call_s = 0, exe_s = 0;
  for (auto _ : state) {
    const auto a = Clock::now();
    benchmark::DoNotOptimize(step(w.params, w.tokens, w.labels));
    const auto b = Clock::now();
    benchmark::DoNotOptimize(exe->run(in));
    const auto c = Clock::now();
    call_s += std::chrono::duration<double>(b - a).count();
    exe_s += std::chrono::duration<double>(c - b).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.SetLabel(s.name);
  state.counters["call_us"] = call_s / n * 1e6;
  state.counters["exe_us"] = exe_s / n * 1e6;
  state.counters["overhead_us"] = (call_s - exe_s) / n * 1e6;
  state.counters["interp_ms"] = interp_ms;
  state.counters["grad_call_ms"] = grad_ms;
  state.counters["first_call_ms"] = first[s.name].cold_ms;
  state.counters["first_call_filling_cache_ms"] = first[s.name].fill_ms;
  state.counters["first_call_cached_ms"] = first[s.name].warm_ms;
}

BENCHMARK(BM_transformer_step)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

}  // namespace
}  // namespace cjax::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("openblas_core", cjax::runtime::blas_core_name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
