#include "tools/cjax/backend_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cjax/memory_check.h"
#include "compiler/cpu/executable.h"
#include "compiler/cpu/object_cache.h"
#include "compiler/cpu/step_bench.h"
#include "compiler/cuda/gpu.h"
#include "ir/errors.h"
#include "passes/vjp.h"
#include "runtime/blas_dot.h"
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/gpu_executable.h"
#include "runtime/interpreter.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/source.h"

namespace cjax::cli {
namespace {

std::string mib(size_t bytes) {
  return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string timing(const lower::Timing& t) {
  return fmt::format("{:9.3f} {:9.3f} {:9.3f}", t.min_ms, t.median_ms, t.max_ms);
}

nlohmann::json timing_json(const lower::Timing& t) {
  return {{"min", t.min_ms}, {"median", t.median_ms}, {"max", t.max_ms}};
}

// Which OpenBLAS kernels ran, and whether the environment chose them (OPENBLAS_CORETYPE is read
// once, at load: an inherited "Haswell" pins AVX2 kernels).
std::string blas_kernels() {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  return fmt::format("OpenBLAS {} kernels ({})", runtime::blas_core_name(),
                     core ? fmt::format("OPENBLAS_CORETYPE={}", core) : "auto-detected");
}

// Where the compile time went (`cjax bench --timing`): the program's tracing (or reading) and
// differentiation, then each executable's phases. The two executables compile side by side, so
// their phases add up to more than the compile's wall time.
struct Phase {
  const char* name;
  double (*ms)(const lower::CompileStats&);
};
constexpr Phase kCompilePhases[] = {
    {"lower to MLIR", [](const lower::CompileStats& s) { return s.lower_ms; }},
    {"MLIR passes", [](const lower::CompileStats& s) { return s.optimize_ms; }},
    {"LLVM optimizer", [](const lower::CompileStats& s) { return s.llvm_opt_ms; }},
    {"LLVM codegen, link", [](const lower::CompileStats& s) { return s.jit_ms - s.llvm_opt_ms; }},
    {"compilation cache", [](const lower::CompileStats& s) { return s.cache_ms; }},
};

const char* cache_outcome(const lower::CompileStats& s) {
  if (s.from_cache) return "loaded";
  return lower::object_cache_dir() ? "compiled and stored" : "compiled (the cache is off)";
}

void print_phases(double trace_ms, const lower::StepReport& r, std::ostream& out) {
  out << fmt::format("  compile phases (ms)     {:>9} {:>9}\n", "forward", "backward");
  out << fmt::format("    {:22}{:9.3f}  (the program)\n", "trace or read", trace_ms);
  out << fmt::format("    {:22}{:9.3f}  (the program)\n", "differentiate", r.differentiate_ms);
  for (const Phase& p : kCompilePhases)
    out << fmt::format("    {:22}{:9.3f} {:9.3f}\n", p.name, p.ms(r.fwd_compile),
                       p.ms(r.bwd_compile));
  out << fmt::format("    compilation cache: forward {}, backward {}\n",
                     cache_outcome(r.fwd_compile), cache_outcome(r.bwd_compile));
}

nlohmann::json phases_json(double trace_ms, const lower::StepReport& r) {
  nlohmann::json j = {{"trace", trace_ms}, {"differentiate", r.differentiate_ms}};
  for (const auto& [side, stats] :
       {std::pair{"forward", &r.fwd_compile}, std::pair{"backward", &r.bwd_compile}}) {
    nlohmann::json& s = j[side];
    s["lower"] = stats->lower_ms;
    s["mlir"] = stats->optimize_ms;
    s["llvm_opt"] = stats->llvm_opt_ms;
    s["llvm_codegen"] = stats->jit_ms - stats->llvm_opt_ms;
    s["cache"] = stats->cache_ms;
    s["from_cache"] = stats->from_cache;
  }
  return j;
}

}  // namespace

Evaluator parse_evaluator(const std::string& name) {
  if (name == "cpu") return Evaluator::cpu;
  if (name == "interpreter") return Evaluator::interpreter;
  if (name == "cuda") return Evaluator::cuda;
  throw UsageError(fmt::format("--backend must be cpu, interpreter or cuda, not '{}'", name));
}

std::vector<runtime::Buffer> evaluate(const Jaxpr& jaxpr, std::span<const runtime::Buffer> args,
                                      Evaluator evaluator, const std::string& where) {
  if (evaluator == Evaluator::interpreter) return runtime::eval_jaxpr(jaxpr, args);
  if (evaluator == Evaluator::cuda) {
    if (auto why = runtime::cuda::cublas_unavailable_reason()) throw UnsupportedError(*why);
    return runtime::cuda::GpuExecutable(lower::compile_gpu_program(jaxpr, where)).run(args);
  }
  return lower::compile(jaxpr, where)->run(args);
}

void check_lower_options(const std::string& target, const std::string& emit) {
  if (target == "cuda") {
    if (emit != "mlir" && emit != "ptx" && emit != "plan")
      throw UsageError(fmt::format("--target cuda emits mlir, ptx or plan, not '{}'", emit));
  } else if (emit != "mlir" && emit != "lowered" && emit != "llvm") {
    throw UsageError(fmt::format("--emit {}{}; the cpu target emits mlir, lowered or llvm", emit,
                                 emit == "ptx" || emit == "plan"
                                     ? " needs --target cuda"
                                     : " is not an output of cjax lower"));
  }
}

int print_lowered(const Source& src, const std::string& target, const std::string& emit,
                  bool reference, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(src), [&] {
    check_lower_options(target, emit);
    if (emit == "plan") {
      const Jaxpr jaxpr = load_jaxpr(src);
      runtime::cuda::GpuProgram program = lower::compile_gpu_program(jaxpr, describe(src));
      if (reference) {
        const std::vector<runtime::Buffer> inputs =
            runtime::cuda::gpu_test_inputs(program.in_avals);
        for (const runtime::Buffer& b : runtime::eval_jaxpr(jaxpr, inputs))
          program.reference.push_back(runtime::cuda::summarize(b));
      }
      out << runtime::cuda::to_text(program);
      return kOk;
    }
    if (target == "cuda") {
      out << lower::lower_to_gpu_text(load_jaxpr(src),
                                      emit == "ptx" ? lower::GpuStage::ptx : lower::GpuStage::mlir,
                                      describe(src));
      return kOk;
    }
    lower::Stage stage = emit == "mlir"      ? lower::Stage::mlir
                         : emit == "lowered" ? lower::Stage::lowered
                                             : lower::Stage::llvm;
    out << lower::lower_to_text(load_jaxpr(src), stage, describe(src));
    return kOk;
  });
}

// The inputs `cjax bench` runs on: the example's own, else 0.5 everywhere.
std::vector<runtime::Buffer> bench_inputs(const AutodiffOptions& opts, const Jaxpr& jaxpr) {
  std::vector<runtime::Buffer> inputs = default_inputs(opts.src);
  if (inputs.empty())
    for (const ShapedArray& a : jaxpr.in_avals()) inputs.push_back(runtime::Buffer::full(a, 0.5));
  return inputs;
}

// `cjax bench --step`: the program itself compiled and timed, whatever it returns.
int print_program_bench(const AutodiffOptions& opts, const BenchOptions& bench,
                        const PreparedProgram& p, std::ostream& out) {
  if (!bench.wrt.empty()) throw UsageError("--wrt names gradients; --step differentiates nothing");
  check_fits_in_memory(p.jaxpr);
  const std::vector<runtime::Buffer> inputs = bench_inputs(opts, p.jaxpr);
  lower::ProgramReport r =
      lower::bench_program(p.jaxpr, inputs, describe(opts.src), bench.warmup, bench.repetitions);
  if (bench.json) {
    out << nlohmann::json{{"program", describe(opts.src)},  {"repetitions", r.repetitions},
                          {"compile_ms", r.compile_ms},     {"functions", r.compile.functions},
                          {"calls", r.compile.steps},       {"run_ms", timing_json(r.run)},
                          {"output_bytes", r.output_bytes}, {"peak_bytes", r.peak_bytes},
                          {"blas", blas_kernels()}}
               .dump(2)
        << "\n";
    return kOk;
  }
  out << fmt::format("{} as one program: {} runs after {} warm-up, {}\n", describe(opts.src),
                     r.repetitions, bench.warmup, blas_kernels());
  out << fmt::format("  compile  {:9.3f} ms ({} functions, {} calls a run)\n", r.compile_ms,
                     r.compile.functions, r.compile.steps);
  out << fmt::format("  {:8} {:>9} {:>9} {:>9}  (ms)\n", "", "min", "median", "max");
  out << fmt::format("  run      {}\n", timing(r.run));
  out << fmt::format("  outputs {} ({} bytes), peak {} ({} bytes)\n", mib(r.output_bytes),
                     r.output_bytes, mib(r.peak_bytes), r.peak_bytes);
  if (!r.compile.runtime_calls.empty()) out << "  runtime calls (one line per call site):\n";
  for (const std::string& c : r.compile.runtime_calls) out << "    " << c << "\n";
  return kOk;
}

int print_bench(const AutodiffOptions& opts, const BenchOptions& bench, std::ostream& out,
                std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    const auto t0 = std::chrono::steady_clock::now();
    PreparedProgram p = prepare_program(opts, err);
    const double trace_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (bench.step) return static_cast<ExitCode>(print_program_bench(opts, bench, p, out));
    {  // before the inputs, which may not fit either
      const VjpResult step = vjp_jaxpr(p.jaxpr);
      check_memory_need(step_memory_need(step.fwd, step.bwd, step.num_residuals));
    }
    std::vector<runtime::Buffer> inputs = bench_inputs(opts, p.jaxpr);
    std::vector<bool> wrt;
    for (const std::string& name : bench.wrt) {
      auto it = std::find(p.arg_names.begin(), p.arg_names.end(), name);
      if (it == p.arg_names.end())
        throw UsageError(fmt::format("--wrt: no argument named '{}' (the arguments are {})", name,
                                     fmt::join(p.arg_names, ", ")));
      wrt.resize(p.arg_names.size(), false);
      wrt[static_cast<size_t>(it - p.arg_names.begin())] = true;
    }
    lower::StepReport r = lower::bench_step(p.jaxpr, inputs, describe(opts.src), bench.warmup,
                                            bench.repetitions, wrt);
    if (bench.json) {
      nlohmann::json j = {{"program", describe(opts.src)},
                          {"policy", opts.policy},
                          {"repetitions", r.repetitions},
                          {"compile_ms", r.compile_ms},
                          {"functions", r.functions},
                          {"calls", r.calls},
                          {"fwd_ms", timing_json(r.fwd)},
                          {"bwd_ms", timing_json(r.bwd)},
                          {"step_ms", timing_json(r.step)},
                          {"residual_bytes", r.residual_bytes},
                          {"recomputed_residuals", r.recomputed_residuals},
                          {"peak_bytes", r.peak_bytes},
                          {"blas", blas_kernels()}};
      if (bench.timing) j["phases_ms"] = phases_json(trace_ms, r);
      out << j.dump(2) << "\n";
      return kOk;
    }
    out << fmt::format("{}{}: {} steps after {} warm-up, {}\n", describe(opts.src),
                       opts.policy.empty() ? "" : " with policy " + opts.policy, r.repetitions,
                       bench.warmup, blas_kernels());
    out << fmt::format(
        "  compile  {:9.3f} ms (forward and backward executables: {} functions, {} calls a step)\n",
        r.compile_ms, r.functions, r.calls);
    if (bench.timing) print_phases(trace_ms, r, out);
    out << fmt::format("  {:8} {:>9} {:>9} {:>9}  (ms)\n", "", "min", "median", "max");
    out << fmt::format("  forward  {}\n", timing(r.fwd));
    out << fmt::format("  backward {}\n", timing(r.bwd));
    out << fmt::format("  step     {}\n", timing(r.step));
    out << fmt::format("  residuals {} ({} bytes), peak {} ({} bytes)\n", mib(r.residual_bytes),
                       r.residual_bytes, mib(r.peak_bytes), r.peak_bytes);
    if (r.recomputed_residuals > 0)
      out << fmt::format(
          "  ({} elementwise residuals recomputed in the backward program: fwd-bwd --compiled)\n",
          r.recomputed_residuals);
    if (!r.runtime_calls.empty()) out << "  runtime calls (one line per call site):\n";
    for (const std::string& c : r.runtime_calls) out << "    " << c << "\n";
    return kOk;
  });
}

}  // namespace cjax::cli
