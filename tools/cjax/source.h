// Loading the program a subcommand works on, with errors mapped to exit codes.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"
#include "tools/cjax/commands.h"

namespace cjax::cli {

// Runs `body`, printing any error to `err` as "cjax: <context>: <message>" and returning the
// matching exit code.
int guarded(std::ostream& err, const std::string& context, const std::function<int()>& body);

// Throws UsageError unless exactly one kind of source is given.
void check_source(const Source& src);
// The jaxpr of an example or plugin function (traced) or of a file (parsed and verified).
Jaxpr load_jaxpr(const Source& src);
std::string describe(const Source& src);
// The example's own inputs; empty for plugins and files.
std::vector<runtime::Buffer> default_inputs(const Source& src);

// The whole file ("-" = stdin); UsageError when it cannot be read.
std::string read_input_file(const std::string& path);

}  // namespace cjax::cli
