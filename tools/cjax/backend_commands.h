// The CLI's back-end subcommands: `lower` (the module at a stage of the MLIR pipeline) and
// `bench` (compile and time a training step).
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"
#include "tools/cjax/autodiff_commands.h"
#include "tools/cjax/commands.h"

namespace cjax::cli {

// What evaluates programs for `run` and `grad`: compiled code (the default) or the reference
// interpreter (`--backend interpreter`).
enum class Evaluator { cpu, interpreter, cuda };
// "cpu" | "interpreter" | "cuda"; else UsageError
Evaluator parse_evaluator(const std::string& name);
std::vector<runtime::Buffer> evaluate(const Jaxpr& jaxpr, std::span<const runtime::Buffer> args,
                                      Evaluator evaluator, const std::string& where);

// The --target and --emit pair (cjax::UsageError for one the target does not emit); checked
// before the program is loaded.
void check_lower_options(const std::string& target, const std::string& emit);
// target "cpu": emit "mlir" (as lowered: tensors and linalg), "lowered" (the LLVM dialect) or
// "llvm" (IR). target "cuda": emit "mlir" (kernels outlined, in the NVVM dialect) or "ptx".
int print_lowered(const Source& src, const std::string& target, const std::string& emit,
                  bool reference, std::ostream& out, std::ostream& err);

struct BenchOptions {
  int repetitions = 20;
  int warmup = 3;
  bool json = false;
  bool timing = false;           // --timing: the compile's phases
  std::vector<std::string> wrt;  // --wrt: argument names to differentiate (default: all)
  bool step = false;             // --step: time the program as it is, not its gradient
};
int print_bench(const AutodiffOptions& opts, const BenchOptions& bench, std::ostream& out,
                std::ostream& err);

}  // namespace cjax::cli
