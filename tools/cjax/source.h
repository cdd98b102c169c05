// Loading the jaxpr a subcommand works on, with errors mapped to exit codes.
#pragma once

#include <functional>
#include <ostream>

#include "ir/jaxpr.h"
#include "tools/cjax/commands.h"

namespace cjax::cli {

// Runs `body`, printing any cjax error to `err` as "cjax: <context>: <message>" and returning
// the matching exit code.
int guarded(std::ostream& err, const std::string& context, const std::function<int()>& body);

// The jaxpr of an example (traced) or of a text file (parsed and verified).
Jaxpr load_jaxpr(const Source& src);
std::string describe(const Source& src);

}  // namespace cjax::cli
