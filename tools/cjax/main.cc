// The cjax command-line tool. Only argument parsing lives here; subcommands are in commands.cc.
#include <CLI/CLI.hpp>

#include <iostream>

#include "tools/cjax/autodiff_commands.h"
#include "tools/cjax/commands.h"
#include "tools/cjax/exit_codes.h"

namespace {

// Adds the `--example NAME | FILE` pair every jaxpr-consuming subcommand takes.
void add_source_options(CLI::App* cmd, cjax::cli::Source& src) {
  auto* ex =
      cmd->add_option("--example,-e", src.example, "a built-in example (see `cjax examples`)");
  auto* file = cmd->add_option("file", src.file, "a jaxpr text file, or - for stdin");
  ex->excludes(file);
  file->excludes(ex);
}

// The options every autodiff subcommand shares.
void add_autodiff_options(CLI::App* cmd, cjax::cli::AutodiffOptions& o) {
  add_source_options(cmd, o.src);
  cmd->add_option("--arg-names", o.arg_names, "names of the arguments, e.g. W1,W2,W3,x")
      ->delimiter(',');
  cmd->add_option("--policy", o.policy,
                  "wrap the whole function in checkpoint with this policy (e.g. "
                  "dots_with_no_batch_dims_saveable)");
  cmd->add_option("--names", o.names, "names for the name policies, e.g. a,b")->delimiter(',');
  cmd->add_option("--offload-names", o.offload_names, "names the offload policies move to the host")
      ->delimiter(',');
}

bool has_source(const cjax::cli::Source& src) {
  return !src.example.empty() || !src.file.empty();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cjax::cli;
  CLI::App app{"cjax: JAX-style tracing, autodiff and remat for C++"};
  app.require_subcommand(1);

  app.add_subcommand("examples", "list the built-in examples");

  Source jaxpr_src;
  auto* jaxpr = app.add_subcommand("jaxpr",
                                   "print an example's traced jaxpr, or parse, verify "
                                   "and re-print a jaxpr file");
  add_source_options(jaxpr, jaxpr_src);

  AutodiffOptions res_opts;
  bool bytes = false, json = false;
  auto* residuals =
      app.add_subcommand("residuals", "what the backward pass keeps (print_saved_residuals)");
  add_autodiff_options(residuals, res_opts);
  residuals->add_flag("--bytes", bytes, "append each residual's size and a total");
  residuals->add_flag("--json", json, "print the residuals as JSON");

  AutodiffOptions fb_opts;
  std::string layout = "columns", only;
  auto* fwd_bwd = app.add_subcommand("fwd-bwd", "the forward and backward programs of vjp");
  add_autodiff_options(fwd_bwd, fb_opts);
  fwd_bwd->add_option("--layout", layout, "columns (side by side) or stacked")
      ->check(CLI::IsMember({"columns", "stacked"}));
  fwd_bwd->add_option("--only", only, "print just one program, plain")
      ->check(CLI::IsMember({"fwd", "bwd"}));

  AutodiffOptions grad_opts;
  std::vector<double> inputs;
  auto* grad =
      app.add_subcommand("grad", "the value and gradient at the example's (or given) inputs");
  add_autodiff_options(grad, grad_opts);
  grad->add_option("--inputs", inputs, "one fill value per argument, e.g. 1,0.5,2")->delimiter(',');

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }

  if (app.got_subcommand("examples")) return list_examples(std::cout);
  if (app.got_subcommand("jaxpr")) {
    if (!has_source(jaxpr_src)) {
      std::cerr << "cjax jaxpr: give --example NAME or a FILE (- for stdin)\n";
      return kUsage;
    }
    return print_jaxpr(jaxpr_src, std::cout, std::cerr);
  }
  auto* sub = app.get_subcommands().front();
  AutodiffOptions* o = sub == residuals ? &res_opts : sub == fwd_bwd ? &fb_opts : &grad_opts;
  if (!has_source(o->src)) {
    std::cerr << "cjax " << sub->get_name() << ": give --example NAME or a FILE (- for stdin)\n";
    return kUsage;
  }
  if (sub == residuals) return print_residuals(*o, bytes, json, std::cout, std::cerr);
  if (sub == fwd_bwd) return print_fwd_bwd(*o, layout, only, std::cout, std::cerr);
  return print_grad(*o, inputs, std::cout, std::cerr);
}
