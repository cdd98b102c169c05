#include "tools/cjax/run_command.h"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "cjax/memory_check.h"
#include "tools/cjax/backend_commands.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/source.h"

namespace cjax::cli {
namespace {

// What `cjax run` calls each output (and its .npy file): `out` for a lone array, `out_1` for a
// returned tuple's second element, and a leaf of a returned struct by its path, as arguments
// are named: `out_0.layers.W1`, `out.b`. Without the traced function's result paths (a parsed
// file), `out` or `out_0`, `out_1`, ...
std::vector<std::string> output_names(const Jaxpr& j) {
  const size_t n = j.outvars.size();
  std::vector<std::string> names;
  if (!j.debug || j.debug->result_paths.size() != n) {
    for (size_t i = 0; i < n; ++i) names.push_back(n == 1 ? "out" : fmt::format("out_{}", i));
    return names;
  }
  for (const std::string& path : j.debug->result_paths) {
    if (path.rfind("result", 0) != 0) {
      names.push_back(fmt::format("out_{}", names.size()));
      continue;
    }
    std::string_view rest = std::string_view(path).substr(std::string_view("result").size());
    std::string name = "out";
    // A leading tuple position, "[1]", becomes "_1".
    const size_t close = rest.find(']');
    if (rest.size() > 2 && rest[0] == '[' && close != std::string_view::npos &&
        rest.substr(1, close - 1).find_first_not_of("0123456789") == std::string_view::npos) {
      name += '_';
      name.append(rest.substr(1, close - 1));
      rest.remove_prefix(close + 1);
    }
    name.append(rest);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

int run_program(const RunOptions& opts, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    Jaxpr j = load_jaxpr(opts.src);
    check_fits_in_memory(j);             // before the inputs, which may not fit either
    std::vector<std::string> arg_names;  // for messages: the example's names, or the file's
    if (j.debug && j.debug->arg_names.size() == j.invars.size())
      arg_names = j.debug->arg_names;
    else
      for (const Var& v : j.invars) arg_names.push_back(v.hint());
    std::vector<runtime::Buffer> args =
        make_inputs(j, arg_names, opts.inputs, default_inputs(opts.src));
    std::vector<runtime::Buffer> outs =
        evaluate(j, args, parse_evaluator(opts.backend), describe(opts.src));
    const std::vector<std::string> names = output_names(j);
    // The files first: should writing them fail, nothing has been printed.
    const std::vector<std::string> written = opts.out_dir.empty()
                                                 ? std::vector<std::string>{}
                                                 : write_npy_files(opts.out_dir, names, outs);
    for (size_t i = 0; i < outs.size(); ++i)
      out << names[i] << ": " << Array::from_buffer(outs[i]).to_string() << "\n";
    for (const std::string& path : written) out << "wrote " << path << "\n";
    return kOk;
  });
}

}  // namespace cjax::cli
