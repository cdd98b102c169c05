// Running a training step (a vjp's forward program, then its backward program) on the reference
// interpreter or on compiled code, and measuring the peak bytes the tracking allocator saw, the
// way the memory model (passes/memory/memory_model.h) describes the step.
#pragma once

#include <algorithm>
#include <vector>

#include "compiler/cpu/executable.h"
#include "ir/jaxpr.h"
#include "passes/vjp.h"
#include "runtime/buffer.h"
#include "runtime/interpreter.h"

namespace cjax::memory::testing {

// Bytes at the peak of the last of `steps` steps, each counted from before its arguments were
// allocated; `run_fwd` and `run_bwd` evaluate the two programs on their arguments.
template <class RunFwd, class RunBwd>
size_t measured_step_peak(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals, int steps,
                          const RunFwd& run_fwd, const RunBwd& run_bwd) {
  size_t base = 0;
  for (int step = 0; step < steps; ++step) {
    base = runtime::memory_stats().live_bytes;
    runtime::reset_peak_bytes();
    std::vector<runtime::Buffer> args;
    for (const Var& v : fwd.invars) args.push_back(runtime::Buffer::full(v.aval(), 0.5));
    std::vector<runtime::Buffer> outs = run_fwd(args);
    const size_t n_primal = outs.size() - num_residuals;
    std::vector<runtime::Buffer> bwd_in(outs.begin() + static_cast<ptrdiff_t>(n_primal),
                                        outs.end());
    outs.resize(n_primal);
    for (size_t i = bwd_in.size(); i < bwd.invars.size(); ++i)
      bwd_in.push_back(runtime::Buffer::full(bwd.invars[i].aval(), 1.0));
    std::vector<runtime::Buffer> grads = run_bwd(bwd_in);
  }
  return runtime::memory_stats().peak_bytes - base;
}

// The step on the reference interpreter.
inline size_t measured_interpreter_peak(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals) {
  return measured_step_peak(
      fwd, bwd, num_residuals, 1, [&](const auto& in) { return runtime::eval_jaxpr(fwd, in); },
      [&](const auto& in) { return runtime::eval_jaxpr(bwd, in); });
}

// The same step through compiled forward and backward executables; the second of two steps
// (the first also allocates what the compiled code keeps for later calls).
inline size_t measured_compiled_peak(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals) {
  auto f = lower::compile(fwd, "forward");
  auto b = lower::compile(bwd, "backward");
  return measured_step_peak(
      fwd, bwd, num_residuals, 2, [&](const auto& in) { return f->run(in); },
      [&](const auto& in) { return b->run(in); });
}

// The gradient of `j` (a cotangent of ones per output) on the interpreter, at arguments filled
// with `value(i)` for invar i.
template <class Value>
std::vector<std::vector<double>> interpreter_gradients(const Jaxpr& j, const Value& value) {
  VjpResult r = vjp_jaxpr(j);
  std::vector<runtime::Buffer> args;
  for (size_t i = 0; i < r.fwd.invars.size(); ++i)
    args.push_back(runtime::Buffer::full(r.fwd.invars[i].aval(), value(i)));
  std::vector<runtime::Buffer> outs = runtime::eval_jaxpr(r.fwd, args);
  std::vector<runtime::Buffer> bwd_in(outs.end() - static_cast<ptrdiff_t>(r.num_residuals),
                                      outs.end());
  for (const Atom& o : j.outvars) bwd_in.push_back(runtime::Buffer::full(o.aval(), 1.0));
  std::vector<std::vector<double>> g;
  for (const runtime::Buffer& b : runtime::eval_jaxpr(r.bwd, bwd_in)) g.push_back(b.to_doubles());
  return g;
}

}  // namespace cjax::memory::testing
