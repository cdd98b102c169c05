// The cjax command-line tool. Only argument parsing lives here (CLI11 is slow to compile, so it
// stays in this one file); the subcommands are in commands.cc, autodiff_commands.cc,
// run_command.cc and backend_commands.cc. Each add_*_command function declares one subcommand and
// returns what runs it. Every usage error reads `cjax: <command>: <message>` (exit code 2): the
// command line is checked for unknown commands and options first (usage.h), CLI11's other errors
// are reworded, and the runners check the option values before they run the command.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cjax/version.h"
#include "ir/errors.h"
#include "tools/cjax/autodiff_commands.h"
#include "tools/cjax/backend_commands.h"
#include "tools/cjax/commands.h"
#include "tools/cjax/error_report.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/inputs.h"
#include "tools/cjax/memory_command.h"
#include "tools/cjax/run_command.h"
#include "tools/cjax/source.h"
#include "tools/cjax/usage.h"

namespace {

using namespace cjax::cli;
using Runner = std::function<int()>;

CLI::App* add_command(CLI::App& app, const char* name, const char* what, const char* example) {
  CLI::App* cmd = app.add_subcommand(name, what);
  cmd->footer(std::string("Example:\n  ") + example);
  return cmd;
}

// A comma-separated list; one argument per occurrence, so `--inputs 1,2 prog.jaxpr` leaves the
// FILE alone.
CLI::Option* add_list(CLI::App* cmd, const char* name, std::vector<std::string>& values,
                      const char* what) {
  return cmd->add_option(name, values, what)->delimiter(',')->allow_extra_args(false);
}

// Where the program comes from: --example NAME | --plugin LIB --function NAME | FILE. Exactly
// one (check_source, run before the command).
void add_source_options(CLI::App* cmd, Source& src) {
  cmd->add_option("--example,-e", src.example, "a built-in example (see `cjax examples`)");
  cmd->add_option("--plugin,-p", src.plugin,
                  "a shared library of your functions (see docs/getting-started.md)");
  cmd->add_option("--function,-f", src.function, "the plugin's function to use (with --plugin)");
  cmd->add_option("file", src.file, "a jaxpr file, text or JSON (- for stdin)");
}

void add_autodiff_options(CLI::App* cmd, AutodiffOptions& o) {
  add_source_options(cmd, o.src);
  add_list(cmd, "--arg-names", o.arg_names, "names of the arguments, e.g. W1,W2,W3,x");
  cmd->add_option("--policy", o.policy,
                  "wrap the whole function in checkpoint with this policy (e.g. "
                  "dots_with_no_batch_dims_saveable)");
  add_list(cmd, "--names", o.names, "names for the name policies, e.g. a,b (see checkpoint_name)");
  add_list(cmd, "--offload-names", o.offload_names, "names the offload policies move to the host");
  cmd->add_option("--budget", o.budget,
                  "checkpoint with memory_budget: save what fits this peak, e.g. 24MiB "
                  "(docs/auto-remat.md)");
}

void add_per_process_option(CLI::App* cmd, AutodiffOptions& o) {
  cmd->add_flag("--per-process", o.per_process,
                "the body of the program's shard_map, as each process runs it on its blocks "
                "(docs/distributed.md)");
}

void add_backend_option(CLI::App* cmd, std::string& backend) {
  cmd->add_option("--backend", backend,
                  "cpu: compiled through MLIR (default); interpreter: the reference interpreter; "
                  "cuda: compiled for and run on the GPU (straight-line programs, docs/gpu.md)")
      ->check(CLI::IsMember({"cpu", "interpreter", "cuda"}));
}

void add_input_options(CLI::App* cmd, InputArgs& in, std::string& out_dir) {
  add_list(cmd, "--inputs", in.items,
           "one per argument: a number (an array filled with it) or a .npy file; or one "
           "directory of <name>.npy files, or one .npz, read by argument name");
  cmd->add_option("--seed", in.seed,
                  "random inputs from this seed, 0 to 2^64-1: floats in [-1, 1), integers in "
                  "[0, --int-high)")
      ->type_name("N");
  cmd->add_option("--int-high", in.int_high,
                  "with --seed: integers are drawn from [0, N), e.g. token ids below a vocabulary "
                  "size (default 10)")
      ->type_name("N");
  cmd->add_option("--int-range", in.int_range,
                  "with --seed: integers are drawn from [lo, hi), e.g. 0,96 for token ids or "
                  "-5,5")
      ->type_name("LO,HI");
  cmd->add_option("--out,-o", out_dir, "also write the results as .npy files into this directory");
}

Runner add_examples_command(CLI::App& app) {
  auto plugin = std::make_shared<std::string>();
  auto* cmd = add_command(app, "examples", "list the built-in examples, or a plugin's functions",
                          "cjax examples --plugin ./libmymodel.so");
  cmd->add_option("--plugin,-p", *plugin, "list this plugin's functions instead");
  return [plugin] { return list_examples(*plugin, std::cout, std::cerr); };
}

Runner add_jaxpr_command(CLI::App& app) {
  struct State {
    Source src;
    bool json = false;
    Style style;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "jaxpr",
                          "print a program's jaxpr (traced, or a file parsed, verified and "
                          "re-printed), as text or JSON",
                          "cjax jaxpr --example tutorial/f --json > f.json && cjax jaxpr f.json");
  add_source_options(cmd, s->src);
  cmd->add_flag("--json", s->json, "print the JSON form (docs/jaxpr-json.md)");
  cmd->add_option("--color", s->style.color,
                  "colour the jaxpr: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  return [s] {
    check_source(s->src);
    return print_jaxpr(s->src, s->json, s->style, std::cout, std::cerr);
  };
}

Runner add_residuals_command(CLI::App& app) {
  struct State {
    AutodiffOptions opts;
    bool bytes = false, json = false;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "residuals", "what the backward pass keeps (print_saved_residuals)",
                          "cjax residuals --example tutorial/f --policy dots_saveable --bytes");
  add_autodiff_options(cmd, s->opts);
  add_per_process_option(cmd, s->opts);
  cmd->add_flag("--bytes", s->bytes, "append each residual's size and a total");
  cmd->add_flag("--json", s->json, "print the residuals as JSON");
  return [s] {
    check_source(s->opts.src);
    check_autodiff_options(s->opts);
    return print_residuals(s->opts, s->bytes, s->json, std::cout, std::cerr);
  };
}

Runner add_fwd_bwd_command(CLI::App& app) {
  struct State {
    AutodiffOptions opts;
    std::string layout = "auto", only;
    bool compiled = false;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "fwd-bwd", "the forward and backward programs of vjp",
                          "cjax fwd-bwd --example tutorial/f --layout stacked");
  add_autodiff_options(cmd, s->opts);
  add_per_process_option(cmd, s->opts);
  cmd->add_option("--layout", s->layout,
                  "auto (side by side when it fits the terminal, else stacked), columns, stacked")
      ->check(CLI::IsMember({"auto", "columns", "stacked"}));
  cmd->add_option("--only", s->only, "print just one program, plain")
      ->check(CLI::IsMember({"fwd", "bwd"}));
  cmd->add_flag("--compiled", s->compiled,
                "the programs as compiled code runs them: residuals that are elementwise "
                "functions of others recomputed in the backward program (docs/backend.md)");
  return [s] {
    check_source(s->opts.src);
    check_autodiff_options(s->opts);
    return print_fwd_bwd(s->opts, s->layout, s->only, s->compiled, std::cout, std::cerr);
  };
}

Runner add_grad_command(CLI::App& app) {
  struct State {
    AutodiffOptions opts;
    GradOptions grad;
    InputArgs inputs;
    std::string out_dir;
    std::string backend = "cpu";
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "grad",
                          "the value and the gradient with respect to the floating-point "
                          "arguments, or those --wrt names",
                          "cjax grad --example tutorial/f --inputs W1.npy,W2.npy,W3.npy,1 -o out");
  add_autodiff_options(cmd, s->opts);
  add_list(cmd, "--wrt", s->grad.wrt,
           "differentiate only these arguments, e.g. W1,W2 (default: every floating-point one)");
  cmd->add_flag("--allow-int", s->grad.allow_int,
                "integer and bool arguments may be differentiated too (their gradients are zeros), "
                "as JAX's allow_int");
  add_input_options(cmd, s->inputs, s->out_dir);
  add_backend_option(cmd, s->backend);
  return [s] {
    check_source(s->opts.src);
    check_autodiff_options(s->opts);
    InputOptions inputs = input_options(s->inputs);
    return print_grad(s->opts, s->grad, inputs, s->out_dir, s->backend, std::cout, std::cerr);
  };
}

Runner add_run_command(CLI::App& app) {
  struct State {
    RunOptions run;
    InputArgs inputs;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "run", "evaluate a program on inputs and print its outputs",
                          "cjax run --example tutorial/f --seed 0 --out results");
  add_source_options(cmd, s->run.src);
  add_input_options(cmd, s->inputs, s->run.out_dir);
  add_backend_option(cmd, s->run.backend);
  return [s] {
    check_source(s->run.src);
    s->run.inputs = input_options(s->inputs);
    return run_program(s->run, std::cout, std::cerr);
  };
}

Runner add_lower_command(CLI::App& app) {
  struct State {
    Source src;
    std::string emit = "mlir";
    std::string target = "cpu";
    bool reference = false;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "lower",
                          "the program compiled through MLIR: the module after lowering, after "
                          "the pass pipeline, or as LLVM IR; or its GPU kernels as PTX, or the "
                          "whole GPU program for cjax-gpu-run",
                          "cjax lower --example tutorial/f --emit mlir | mlir-opt-19");
  add_source_options(cmd, s->src);
  cmd->add_option("--target", s->target, "cpu (the default) or cuda (NVIDIA GPUs, sm_90)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--emit", s->emit,
                  "mlir (tensors and linalg, as lowered; for cuda: the kernels in the NVVM "
                  "dialect), lowered (the LLVM dialect), llvm (IR), ptx (cuda only) or plan "
                  "(cuda only: kernels, buffers and steps, which cjax-gpu-run runs; docs/gpu.md)")
      ->check(CLI::IsMember({"mlir", "lowered", "llvm", "ptx", "plan"}));
  cmd->add_flag("--reference", s->reference,
                "with --emit plan: add what the interpreter computes on cjax-gpu-run's inputs, "
                "which it checks the GPU's results against");
  return [s] {
    check_source(s->src);
    check_lower_options(s->target, s->emit);
    if (s->reference && s->emit != "plan")
      throw cjax::UsageError("--reference goes with --emit plan");
    return print_lowered(s->src, s->target, s->emit, s->reference, std::cout, std::cerr);
  };
}

Runner add_bench_command(CLI::App& app) {
  struct State {
    AutodiffOptions opts;
    BenchOptions bench;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "bench",
                          "compile a program's forward and backward executables and time the "
                          "training step (--step: the program itself, one executable)",
                          "cjax bench --example block/mlp --wrt W1,W2 --json");
  add_autodiff_options(cmd, s->opts);
  add_list(cmd, "--wrt", s->bench.wrt, "differentiate only these arguments, e.g. W1,W2");
  cmd->add_option("--repetitions,-r", s->bench.repetitions, "timed steps (default 20)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", s->bench.warmup, "untimed steps first (default 3)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--json", s->bench.json,
                "print JSON: compile_ms fwd_ms bwd_ms step_ms residual_bytes "
                "recomputed_residuals peak_bytes");
  cmd->add_flag("--step", s->bench.step,
                "time the program as it is, not its gradient: a whole training step returning "
                "its updated weights, say");
  cmd->add_flag("--timing", s->bench.timing,
                "also print where the compile time went (trace, differentiate, lower, MLIR, LLVM, "
                "cache)");
  return [s] {
    check_source(s->opts.src);
    check_autodiff_options(s->opts);
    return print_bench(s->opts, s->bench, std::cout, std::cerr);
  };
}

Runner add_memory_command(CLI::App& app) {
  struct State {
    AutodiffOptions opts;
    MemoryOptions mem;
  };
  auto s = std::make_shared<State>();
  auto* cmd = add_command(app, "memory",
                          "residual bytes, peak bytes and recomputed FLOPs of the training step "
                          "under every policy and memory budgets",
                          "cjax memory --example block/mlp --budgets 90MiB,95MiB");
  add_source_options(cmd, s->opts.src);
  add_per_process_option(cmd, s->opts);
  add_list(cmd, "--names", s->opts.names, "add the name policies, with these names");
  add_list(cmd, "--budgets", s->mem.budgets,
           "memory_budget rows at these peaks (default: three on the trade-off curve)");
  cmd->add_flag("--json", s->mem.json, "print the table as JSON");
  cmd->add_flag("--timing", s->mem.timing, "also print how long each budget took to solve");
  cmd->add_option("--plot", s->mem.plot,
                  "also draw live bytes over the step per policy and peak vs recomputed FLOPs "
                  "into this SVG file");
  return [s] {
    check_source(s->opts.src);
    check_memory_options(s->mem);
    return print_memory(s->opts, s->mem, std::cout, std::cerr);
  };
}

Runner add_comms_command(CLI::App& app) {
  auto src = std::make_shared<Source>();
  auto* cmd = add_command(app, "comms",
                          "what each process sends per run: every collective of a shard_map "
                          "program, with its bytes (docs/distributed.md)",
                          "cjax comms prog.jaxpr");
  add_source_options(cmd, *src);
  return [src] {
    check_source(*src);
    return print_comms(*src, std::cout, std::cerr);
  };
}

// The options of `app` (a command or the app itself) for check_command_line.
std::vector<OptionSpec> option_specs(const CLI::App* app) {
  std::vector<OptionSpec> specs;
  for (const CLI::Option* o : app->get_options()) {
    OptionSpec spec;
    for (const std::string& l : o->get_lnames()) spec.names.push_back("--" + l);
    for (const std::string& n : o->get_snames()) spec.names.push_back("-" + n);
    spec.takes_value = o->get_expected_max() > 0;
    if (!spec.names.empty()) specs.push_back(std::move(spec));
  }
  return specs;
}

// `text` after its first `prefix`, or "" when it has none.
std::string after(const std::string& text, const std::string& prefix) {
  size_t at = text.find(prefix);
  return at == std::string::npos ? "" : text.substr(at + prefix.size());
}

// CLI11's message for the errors check_command_line leaves to it, in our words where CLI11's
// name the problem badly.
std::string parse_error_message(const CLI::ParseError& e) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e))  // "The following argument was not expected: b"
    return fmt::format(
        "unexpected argument{} {} (a command reads one program: --example, "
        "--plugin or a FILE)",
        what.find("arguments were") != std::string::npos ? "s" : "", after(what, ": "));
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && what.ends_with(" missing"))
    return what.substr(0, what.find(':')) + " needs a value";  // "--seed: 1 required UINT missing"
  return what;
}

// An option given with an empty value (`--budget ''`) is a usage error, not the option unset.
void check_no_empty_values(const CLI::App* cmd) {
  for (const CLI::Option* o : cmd->get_options()) {
    if (o->count() == 0 || o->get_expected_max() == 0) continue;
    for (const std::string& r : o->results())
      if (r.empty())
        throw cjax::UsageError(o->nonpositional()
                                   ? fmt::format("{}: the value is empty", o->get_name())
                                   : std::string("the FILE name is empty"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cjax: JAX-style tracing, autodiff and remat for C++", "cjax"};
  app.footer(
      "Run `cjax COMMAND --help` for a command's options. Exit codes: 0 ok, 1 user error, "
      "2 usage error, 3 internal error (docs/cli.md).");
  app.set_version_flag("--version", "cjax " CJAX_VERSION);
  app.require_subcommand(1);
  // --verbose is the app's, and fallthrough (inherited by the subcommands declared below) lets it
  // follow the subcommand too: `cjax grad -e f --verbose`.
  bool verbose = false;
  app.add_flag("--verbose,-v", verbose,
               "on an error, also print its detail: the error type, the input line with a caret, "
               "the program");
  app.fallthrough();

  std::map<CLI::App*, Runner> runners;
  auto add = [&](Runner (*declare)(CLI::App&)) {
    Runner r = declare(app);
    runners[app.get_subcommands({}).back()] = std::move(r);
  };
  add(add_examples_command);
  add(add_jaxpr_command);
  add(add_residuals_command);
  add(add_fwd_bwd_command);
  add(add_grad_command);
  add(add_run_command);
  add(add_lower_command);
  add(add_bench_command);
  add(add_memory_command);
  add(add_comms_command);

  std::vector<CommandSpec> commands;
  for (const CLI::App* cmd : app.get_subcommands({}))
    commands.push_back({cmd->get_name(), option_specs(cmd)});
  const std::vector<OptionSpec> global = option_specs(&app);
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  if (std::optional<UsageProblem> p = check_command_line(commands, global, args)) {
    std::cerr << format_usage_error(*p) << "\n";
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e) == 0 ? kOk : kUsage;  // --help, --version
    std::string command = named_command(commands, global, args);
    std::vector<std::string> names;
    for (const CommandSpec& c : commands) names.push_back(c.name);
    std::string message =
        command.empty()
            ? fmt::format("a command is required: {} (see cjax --help)", fmt::join(names, ", "))
            : parse_error_message(e);
    std::cerr << format_usage_error({command, message}) << "\n";
    return kUsage;
  }
  set_verbose_errors(verbose);
  CLI::App* cmd = app.get_subcommands().front();
  return guarded(std::cerr, cmd->get_name(), [&] {  // nothing escapes to terminate()
    check_no_empty_values(cmd);
    return runners.at(cmd)();
  });
}
