#include "tools/cjax/name_checks.h"

#include <fmt/format.h>

#include <algorithm>

#include "passes/checkpoint_names.h"
#include "passes/policies.h"

namespace cjax::cli {
namespace {

std::string defined_names(const std::vector<std::string>& defined) {
  if (defined.empty()) return "the program names no values (checkpoint_name names them)";
  return fmt::format("the program's names are {}", fmt::join(defined, ", "));
}

void warn(std::ostream& err, const std::string& where, const std::string& message) {
  err << "cjax: " << where << ": warning: " << message << "\n";
}

void warn_unknown(const std::string& where, const std::string& option,
                  const std::vector<std::string>& given, const std::vector<std::string>& defined,
                  std::ostream& err) {
  std::vector<std::string> unknown;
  for (const std::string& n : given)
    if (!std::binary_search(defined.begin(), defined.end(), n)) unknown.push_back("'" + n + "'");
  if (unknown.empty()) return;
  warn(err, where,
       fmt::format("{}: no value is named {}, so the policy selects nothing by {}; {}", option,
                   fmt::join(unknown, " or "), unknown.size() == 1 ? "that name" : "those names",
                   defined_names(defined)));
}

}  // namespace

void warn_about_names(const std::string& where, const Jaxpr& program, const std::string& policy,
                      const std::vector<std::string>& names,
                      const std::vector<std::string>& offload_names, std::ostream& err) {
  const bool reads_names = policies::uses_names(policy);
  const bool reads_offload = policies::uses_offload_names(policy);
  if (!reads_names && names.empty() && offload_names.empty()) return;
  const std::vector<std::string> defined = checkpoint_names(program);
  const std::string by = policy.empty() ? "without --policy" : "with --policy " + policy;
  if (!reads_names && !names.empty())
    warn(err, where, fmt::format("--names is ignored {}: only the name policies read it", by));
  if (!reads_offload && !offload_names.empty())
    warn(err, where,
         fmt::format("--offload-names is ignored {}: only save_and_offload_only_these_names "
                     "reads it",
                     by));
  if (!reads_names) return;
  if (names.empty() && (!reads_offload || offload_names.empty()))
    warn(err, where,
         fmt::format("{} without {} selects no value by name; {}", policy,
                     reads_offload ? "--names or --offload-names" : "--names",
                     defined_names(defined)));
  warn_unknown(where, "--names", names, defined, err);
  if (reads_offload) warn_unknown(where, "--offload-names", offload_names, defined, err);
}

void warn_about_unknown_names(const std::string& where, const Jaxpr& program,
                              const std::vector<std::string>& names, std::ostream& err) {
  if (names.empty()) return;
  warn_unknown(where, "--names", names, checkpoint_names(program), err);
}

}  // namespace cjax::cli
