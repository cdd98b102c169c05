// The cjax command-line tool. Only argument parsing lives here; subcommands are in commands.cc.
#include <CLI/CLI.hpp>

#include <iostream>

#include "tools/cjax/commands.h"
#include "tools/cjax/exit_codes.h"

namespace {

// Adds the `--example NAME | FILE` pair every jaxpr-consuming subcommand takes.
void add_source_options(CLI::App* cmd, cjax::cli::Source& src) {
  auto* ex = cmd->add_option("--example,-e", src.example, "a built-in example (see `cjax examples`)");
  auto* file = cmd->add_option("file", src.file, "a jaxpr text file, or - for stdin");
  ex->excludes(file);
  file->excludes(ex);
}

bool has_source(const cjax::cli::Source& src) { return !src.example.empty() || !src.file.empty(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace cjax::cli;
  CLI::App app{"cjax: JAX-style tracing, autodiff and remat for C++"};
  app.require_subcommand(1);

  app.add_subcommand("examples", "list the built-in examples");

  Source jaxpr_src;
  auto* jaxpr = app.add_subcommand("jaxpr", "print an example's traced jaxpr, or parse, verify "
                                            "and re-print a jaxpr file");
  add_source_options(jaxpr, jaxpr_src);

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
  return kUsage;
}
