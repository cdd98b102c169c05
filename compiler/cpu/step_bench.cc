#include "compiler/cpu/step_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <future>

#include "compiler/cpu/executable.h"
#include "ir/errors.h"
#include "passes/pipeline.h"

namespace cjax::lower {
namespace {

using Clock = std::chrono::steady_clock;

Timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2], ms.back()};
}

double elapsed_ms(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

StepReport bench_step(const Jaxpr& jaxpr, std::span<const runtime::Buffer> inputs,
                      const std::string& where, int warmup, int repetitions,
                      const std::vector<bool>& wrt) {
  const auto outs = jaxpr.out_avals();
  if (outs.size() != 1 || !is_floating(outs[0].dtype))
    throw UsageError(
        fmt::format("bench: {} must return one float array to differentiate, it "
                    "returns {} values (--step times a program as it is, a training step "
                    "returning updated weights say)",
                    where, outs.size()));
  if (repetitions < 1) throw UsageError("bench: at least one repetition");
  StepReport r;
  if (!wrt.empty() && wrt.size() != jaxpr.invars.size())
    throw UsageError(
        fmt::format("bench: {} flags for {} gradients", wrt.size(), jaxpr.invars.size()));
  // The step as grad runs it (cheap residuals recomputed); gradients nobody asked for are never
  // computed.
  StepOptions options;
  options.wrt = wrt;
  auto t_diff = Clock::now();
  TrainingStep p = training_step(jaxpr, options);
  r.differentiate_ms = elapsed_ms(t_diff);
  r.recomputed_residuals = p.recomputed_residuals;
  r.repetitions = repetitions;
  // Compiled side by side: each has its own MLIR and LLVM contexts.
  auto t_compile = Clock::now();
  auto compiling_bwd =
      std::async(std::launch::async, [&] { return compile(p.bwd, where + " (backward)"); });
  std::shared_ptr<const Executable> fwd, bwd;
  try {
    fwd = compile(p.fwd, where + " (forward)");
  } catch (...) {
    compiling_bwd.wait();
    throw;
  }
  bwd = compiling_bwd.get();
  r.compile_ms = elapsed_ms(t_compile);
  r.fwd_compile = fwd->compile_stats();
  r.bwd_compile = bwd->compile_stats();
  r.functions = fwd->compile_stats().functions + bwd->compile_stats().functions;
  r.calls = fwd->compile_stats().steps + bwd->compile_stats().steps;
  for (const auto& c : fwd->compile_stats().runtime_calls) r.runtime_calls.push_back("fwd: " + c);
  for (const auto& c : bwd->compile_stats().runtime_calls) r.runtime_calls.push_back("bwd: " + c);
  const runtime::Buffer ct = runtime::Buffer::full(outs[0], 1.0);

  std::vector<double> fwd_ms, bwd_ms, step_ms;
  for (int i = 0; i < warmup + repetitions; ++i) {
    const bool timed = i >= warmup;
    if (timed) runtime::reset_peak_bytes();
    auto t0 = Clock::now();
    std::vector<runtime::Buffer> f = fwd->run(inputs);
    const double tf = elapsed_ms(t0);
    std::vector<runtime::Buffer> bwd_in(f.begin() + 1, f.end());
    bwd_in.push_back(ct);
    if (timed) {
      r.residual_bytes = 0;
      for (size_t k = 1; k < f.size(); ++k) r.residual_bytes += f[k].nbytes();
    }
    f.clear();  // the backward program now owns the residuals
    auto t1 = Clock::now();
    std::vector<runtime::Buffer> grads = bwd->run(bwd_in);
    const double tb = elapsed_ms(t1);
    if (timed) {
      fwd_ms.push_back(tf);
      bwd_ms.push_back(tb);
      step_ms.push_back(elapsed_ms(t0));
      r.peak_bytes = std::max(r.peak_bytes, runtime::memory_stats().peak_bytes);
    }
  }
  r.fwd = summarize(fwd_ms);
  r.bwd = summarize(bwd_ms);
  r.step = summarize(step_ms);
  return r;
}

ProgramReport bench_program(const Jaxpr& jaxpr, std::span<const runtime::Buffer> inputs,
                            const std::string& where, int warmup, int repetitions) {
  if (repetitions < 1) throw UsageError("bench: at least one repetition");
  ProgramReport r;
  r.repetitions = repetitions;
  auto t_compile = Clock::now();
  std::shared_ptr<const Executable> exe = compile(jaxpr, where);
  r.compile_ms = elapsed_ms(t_compile);
  r.compile = exe->compile_stats();
  std::vector<double> ms;
  for (int i = 0; i < warmup + repetitions; ++i) {
    RunStats stats;
    auto t0 = Clock::now();
    std::vector<runtime::Buffer> outs = exe->run(inputs, &stats);
    const double t = elapsed_ms(t0);
    if (i < warmup) continue;
    ms.push_back(t);
    r.output_bytes = stats.output_bytes;
    r.peak_bytes = std::max(r.peak_bytes, stats.peak_bytes);
  }
  r.run = summarize(ms);
  return r;
}

}  // namespace cjax::lower
