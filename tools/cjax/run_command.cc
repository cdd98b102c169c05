#include "tools/cjax/run_command.h"

#include <fmt/format.h>

#include "cjax/array.h"
#include "cjax/memory_check.h"
#include "tools/cjax/backend_commands.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/source.h"

namespace cjax::cli {

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
    std::vector<std::string> names;
    for (size_t i = 0; i < outs.size(); ++i)
      names.push_back(outs.size() == 1 ? "out" : fmt::format("out_{}", i));
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
