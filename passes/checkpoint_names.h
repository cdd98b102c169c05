// The names a program gives its values with checkpoint_name: what the name policies
// (save_only_these_names, ...) can refer to.
#pragma once

#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// The `name` params of `jaxpr`'s `name` eqns, nested jaxprs (checkpoint, jit, scan, cond, while
// bodies) included; sorted, each once.
std::vector<std::string> checkpoint_names(const Jaxpr& jaxpr);

}  // namespace cjax
