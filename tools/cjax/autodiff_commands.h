// The CLI's autodiff subcommands: residuals, fwd-bwd and grad.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "tools/cjax/commands.h"
#include "tools/cjax/inputs.h"

namespace cjax::cli {

struct AutodiffOptions {
  Source src;
  std::vector<std::string> arg_names;  // --arg-names; default: the example's or the file's names
  std::string policy;                  // --policy: wrap the whole function in checkpoint
  std::vector<std::string> names;      // --names, for the name policies
  std::vector<std::string> offload_names;
  std::string budget;  // --budget: checkpoint with policies::memory_budget of this size
  // --per-process: the body of the program's shard_map, as one process runs it on its blocks.
  bool per_process = false;
};

// A --budget or --budgets size ("24MiB", "1.5 GiB", "4096"; ir/byte_size.h) in bytes;
// cjax::UsageError naming the units otherwise.
size_t parse_bytes(const std::string& text);

// The checks of the options that need no program (cjax::UsageError): --policy with --budget, an
// unknown policy, names in both --names and --offload-names, a --budget that is not a size. The
// CLI runs them before it loads the program, so that the message names the command.
void check_autodiff_options(const AutodiffOptions& opts);

// The program an autodiff subcommand works on: loaded, its arguments named (--arg-names, else the
// example's or the file's names), and wrapped in checkpoint with --policy or --budget when given.
// Warnings about --names that cannot do what was meant go to `err` (name_checks.h).
struct PreparedProgram {
  Jaxpr jaxpr;
  std::vector<std::string> arg_names;
};
PreparedProgram prepare_program(const AutodiffOptions& opts, std::ostream& err);

// `cjax grad`'s choice of arguments. Without --wrt: every floating-point argument (with
// --allow-int, every argument), and a line says which integer ones were left out. An integer
// argument in --wrt without --allow-int is JAX's TypeError (exit code 1).
struct GradOptions {
  std::vector<std::string> wrt;  // --wrt: argument names
  bool allow_int = false;        // --allow-int: JAX's allow_int=True
};

int print_residuals(const AutodiffOptions& opts, bool bytes, bool json, std::ostream& out,
                    std::ostream& err);
// layout: "auto" (columns when they fit the terminal, else stacked), "columns" or "stacked";
// only: "", "fwd" or "bwd". `compiled`: the pair as compiled code runs it
// (recompute_cheap_residuals), not JAX's.
int print_fwd_bwd(const AutodiffOptions& opts, const std::string& layout, const std::string& only,
                  bool compiled, std::ostream& out, std::ostream& err);
// The value and gradients at the inputs (inputs.h), after JAX's grad checks (a floating-point
// output; the arguments of GradOptions); with `out_dir`, also written there as value.npy and
// grad_<argument>.npy.
// `backend`: "cpu" (compiled forward and backward executables) or "interpreter".
int print_grad(const AutodiffOptions& opts, const GradOptions& grad, const InputOptions& inputs,
               const std::string& out_dir, const std::string& backend, std::ostream& out,
               std::ostream& err);

}  // namespace cjax::cli
