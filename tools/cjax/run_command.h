// `cjax run`: evaluates a program on input values and prints (or saves) its outputs.
#pragma once

#include <ostream>
#include <string>

#include "tools/cjax/commands.h"
#include "tools/cjax/inputs.h"

namespace cjax::cli {

struct RunOptions {
  Source src;
  InputOptions inputs;
  std::string out_dir;          // --out DIR: also write DIR/out.npy (or out_0.npy, out_1.npy, ...)
  std::string backend = "cpu";  // --backend: cpu (compiled) or interpreter
};

// Evaluates with compiled code, or the reference interpreter (--backend interpreter).
int run_program(const RunOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace cjax::cli
