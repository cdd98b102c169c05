// Long scans under each checkpoint schedule (passes/scan_schedules.h): an explicit Euler integrator
// of dh/dt = tanh(a·h + b) - h/10 with a carry of 64x256 floats, differentiated with respect to a,
// b and h0. BM_long_scan_model (10,000 steps): the residual bytes and the modelled peak of the
// gradient (passes/memory/memory_model.h) and the primal FLOPs the backward pass repeats over the
// forward's (the recompute factor, beside Griewank's r·L - C(s+r, s-1) over L for binomial(s)).
// BM_long_scan_step (1,000 and 10,000 steps): the compiled step's time, measured peak and first
// call (trace, differentiate, compile; a binomial schedule's repeated ranges compile once each, as
// functions: passes/repeated_calls.h). `none` is the peer.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <string>

#include "cjax/cjax.h"
#include "passes/memory/memory_model.h"
#include "runtime/buffer.h"

namespace {

using cjax::Array;
using cjax::ScanSchedule;
namespace np = cjax::numpy;
namespace sched = cjax::scan_schedules;

constexpr int64_t kLongSteps = 10'000;

const std::array<ScanSchedule, 6> kSchedules = {sched::none(),      sched::every_step(),
                                                sched::nested(2),   sched::binomial(4),
                                                sched::binomial(8), sched::binomial(16)};

Array euler_loss(const Array& a, const Array& b, const Array& h0, const ScanSchedule& s,
                 int64_t steps) {
  auto step = [&](const Array& h, const std::tuple<>&) {
    return std::pair{h + 0.01 * (np::tanh(a * h + b) - 0.1 * h), std::tuple<>{}};
  };
  const Array h = cjax::scan(step, h0, std::tuple<>{}, {.length = steps, .checkpoint = s}).first;
  return np::sum(h * h);
}

struct Problem {
  Array a = cjax::random::normal(cjax::random::PRNGKey(0), {64, 256}) * 0.5;
  Array b = cjax::random::normal(cjax::random::PRNGKey(1), {64, 256}) * 0.1;
  Array h0 = cjax::random::normal(cjax::random::PRNGKey(2), {64, 256});
};

void BM_long_scan_model(benchmark::State& state) {
  const ScanSchedule& s = kSchedules[size_t(state.range(0))];
  const Problem p;
  auto loss = [&](const Array& x, const Array& y, const Array& z) {
    return euler_loss(x, y, z, s, kLongSteps);
  };
  cjax::memory::StepModel m;
  for (auto _ : state) m = cjax::memory::model_vjp(cjax::make_jaxpr(loss)(p.a, p.b, p.h0));
  state.SetLabel(s.str());
  state.counters["residual_MiB"] = double(m.residual_bytes) / (1 << 20);
  state.counters["model_peak_MiB"] = double(m.peak_bytes) / (1 << 20);
  state.counters["recompute"] = m.recompute_flops / m.forward_flops;
  if (s.kind == ScanSchedule::Kind::binomial)
    state.counters["griewank"] =
        double(cjax::binomial_extra_steps(kLongSteps, s.snapshots)) / double(kLongSteps);
}
BENCHMARK(BM_long_scan_model)
    ->DenseRange(0, int(kSchedules.size()) - 1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_long_scan_step(benchmark::State& state) {
  const ScanSchedule& s = kSchedules[size_t(state.range(0))];
  const int64_t steps = state.range(1);
  const Problem p;
  auto loss = [&](const Array& x, const Array& y, const Array& z) {
    return euler_loss(x, y, z, s, steps);
  };
  auto step = cjax::jit(cjax::value_and_grad(loss, cjax::argnums<0, 1, 2>));
  const auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(step(p.a, p.b, p.h0));  // compiles
  const double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t peak = 0;
  for (auto _ : state) {
    cjax::runtime::reset_peak_bytes();
    benchmark::DoNotOptimize(step(p.a, p.b, p.h0));
    peak = std::max(peak, cjax::runtime::memory_stats().peak_bytes);
  }
  state.SetLabel(fmt::format("{}, {} steps", s.str(), steps));
  state.counters["peak_MiB"] = double(peak) / (1 << 20);
  state.counters["first_call_s"] = compile_s;
}
BENCHMARK(BM_long_scan_step)
    ->ArgsProduct({benchmark::CreateDenseRange(0, int(kSchedules.size()) - 1, 1),
                   {1'000, kLongSteps}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
