// Timing a training step the way `cjax bench` reports it: the program's forward (outputs and
// residuals) and backward (residuals and cotangent -> gradients) compiled as two executables,
// the residuals living in runtime buffers between them.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "compiler/cpu/executable.h"
#include "ir/jaxpr.h"
#include "runtime/buffer.h"

namespace cjax::lower {

struct Timing {
  double min_ms = 0, median_ms = 0, max_ms = 0;
};

struct StepReport {
  double compile_ms = 0;                  // both executables, compiled side by side (wall time)
  double differentiate_ms = 0;            // the forward and backward programs made from the jaxpr
  CompileStats fwd_compile, bwd_compile;  // each executable's phases
  size_t functions = 0;             // compiled functions of both (repeated segments share one)
  size_t calls = 0;                 // calls of them a step makes
  Timing fwd, bwd, step;            // step = forward then backward, back to back
  size_t residual_bytes = 0;        // what the forward executable returns for the backward one
  size_t recomputed_residuals = 0;  // of JAX's, recomputed by the backward executable instead
  size_t peak_bytes = 0;            // the most bytes live during a step, arguments included
  int repetitions = 0;
  std::vector<std::string> runtime_calls;  // what the compiled code calls back into
};

// Compiles (the forward and backward executables on two threads) and times the step of `jaxpr` (one
// float output, differentiated with a cotangent of ones) on `inputs`: `warmup` untimed steps, then
// `repetitions` timed ones. `wrt[i]` false leaves input i's gradient out of the backward program
// (empty: every input's).
StepReport bench_step(const Jaxpr& jaxpr, std::span<const runtime::Buffer> inputs,
                      const std::string& where, int warmup, int repetitions,
                      const std::vector<bool>& wrt = {});

// Timing a program as it is (`cjax bench --step`): one executable, run on `inputs` `warmup`
// times untimed then `repetitions` times, each run's outputs (a training step's updated weights,
// say) dropped before the next.
struct ProgramReport {
  double compile_ms = 0;
  CompileStats compile;
  Timing run;
  size_t output_bytes = 0;
  size_t peak_bytes = 0;  // the most bytes live during a run, arguments included
  int repetitions = 0;
};
ProgramReport bench_program(const Jaxpr& jaxpr, std::span<const runtime::Buffer> inputs,
                            const std::string& where, int warmup, int repetitions);

}  // namespace cjax::lower
