// Warnings about --names and --offload-names that cannot do what the user meant: a name policy
// given none, names the program never defines with checkpoint_name (the policy then matches
// nothing by them), names for a policy that reads none. Each names the names the program defines.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax::cli {

// For the autodiff subcommands: `policy` is --policy (possibly empty). Writes one line per
// problem to `err`: `cjax: <where>: warning: ...`.
void warn_about_names(const std::string& where, const Jaxpr& program, const std::string& policy,
                      const std::vector<std::string>& names,
                      const std::vector<std::string>& offload_names, std::ostream& err);

// For `cjax memory --names`: the names the program does not define.
void warn_about_unknown_names(const std::string& where, const Jaxpr& program,
                              const std::vector<std::string>& names, std::ostream& err);

}  // namespace cjax::cli
