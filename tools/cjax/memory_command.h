// `cjax memory`: the memory report of a program's training step (forward then backward) under
// every built-in remat policy and under policies::memory_budget at a few budgets, from the memory
// model of passes/memory/.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/cjax/autodiff_commands.h"

namespace cjax::cli {

struct MemoryOptions {
  std::vector<std::string> budgets;  // --budgets: sizes ("24MiB"); default: three on the curve
  bool json = false;
  bool timing = false;  // also print how long each budget took to solve
  std::string plot;     // --plot FILE.svg: live bytes per policy and the trade-off curve
};

// --budgets are sizes (cjax::UsageError otherwise); checked before the program is loaded.
void check_memory_options(const MemoryOptions& mem);

int print_memory(const AutodiffOptions& opts, const MemoryOptions& mem, std::ostream& out,
                 std::ostream& err);

}  // namespace cjax::cli
