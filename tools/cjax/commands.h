// The cjax CLI's subcommands, free of CLI11 (which stays in main.cc: it is slow to compile).
// Each returns the process exit code (see exit_codes.h).
#pragma once

#include <ostream>
#include <string>

namespace cjax::cli {

// Where a program comes from: a built-in example, a function of a plugin, or a jaxpr file (text
// or JSON; "-" = stdin).
struct Source {
  std::string example;
  std::string file;
  std::string plugin;    // --plugin libmymodel.so
  std::string function;  // --function loss (with --plugin)
};

// How output is coloured: "auto" (only on a terminal), "always" or "never".
struct Style {
  std::string color = "auto";
};

// The built-in examples, or with `plugin` set the functions that plugin registers.
int list_examples(const std::string& plugin, std::ostream& out, std::ostream& err);
// The jaxpr as text (coloured per `style` when `out` is the terminal), or as JSON.
int print_jaxpr(const Source& src, bool json, const Style& style, std::ostream& out,
                std::ostream& err);
// `cjax --version`.
int print_version(std::ostream& out);
// `cjax comms`: the bytes each process sends per run, per collective (passes/comms.h).
int print_comms(const Source& src, std::ostream& out, std::ostream& err);

}  // namespace cjax::cli
