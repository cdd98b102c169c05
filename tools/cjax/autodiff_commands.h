// The CLI's autodiff subcommands: residuals, fwd-bwd and grad.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/cjax/commands.h"

namespace cjax::cli {

struct AutodiffOptions {
  Source src;
  std::vector<std::string> arg_names;  // --arg-names; default: the example's or the file's names
  std::string policy;                  // --policy: wrap the whole function in checkpoint
  std::vector<std::string> names;      // --names, for the name policies
  std::vector<std::string> offload_names;
};

int print_residuals(const AutodiffOptions& opts, bool bytes, bool json, std::ostream& out,
                    std::ostream& err);
// layout: "columns" or "stacked"; only: "", "fwd" or "bwd".
int print_fwd_bwd(const AutodiffOptions& opts, const std::string& layout, const std::string& only,
                  std::ostream& out, std::ostream& err);
// `inputs`: one fill value per argument (empty: the example's inputs, or ones for files).
int print_grad(const AutodiffOptions& opts, const std::vector<double>& inputs, std::ostream& out,
               std::ostream& err);

}  // namespace cjax::cli
