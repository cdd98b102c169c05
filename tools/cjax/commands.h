// The cjax CLI's subcommands, free of CLI11 (which stays in main.cc: it is slow to compile).
// Each returns the process exit code (see exit_codes.h).
#pragma once

#include <ostream>
#include <string>

namespace cjax::cli {

// Where a jaxpr comes from: a built-in example or a jaxpr text file ("-" = stdin).
struct Source {
  std::string example;
  std::string file;
};

int list_examples(std::ostream& out);
int print_jaxpr(const Source& src, std::ostream& out, std::ostream& err);

}  // namespace cjax::cli
