#include "cjax/make_jaxpr.h"

#include <fmt/format.h>

namespace cjax::detail {

std::vector<std::string> flat_arg_names(const std::vector<std::string>& names,
                                        const std::vector<FlatTree>& flat_args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < flat_args.size(); ++i) {
    std::string base = i < names.size() ? names[i] : fmt::format("args[{}]", i);
    for (const KeyPath& p : flat_args[i].paths) out.push_back(base + keystr(p));
  }
  return out;
}

TracedFunction trace_flat(const std::vector<FlatTree>& flat_args,
                          const std::vector<std::string>& names, const std::string& function_name,
                          const std::function<FlatTree(std::span<const Array>)>& body) {
  TracedFunction out;
  out.arg_names = flat_arg_names(names, flat_args);
  for (const FlatTree& f : flat_args) out.in_structure += f.structure + ";";
  auto debug = std::make_shared<DebugInfo>();
  debug->function_name = function_name;
  debug->arg_names = out.arg_names;

  TraceScope scope;
  std::vector<Array> tracers;
  for (const FlatTree& f : flat_args)
    for (const Array& leaf : f.leaves) {
      if (!leaf.defined()) throw Error("make_jaxpr: an argument holds a null cjax::Array");
      tracers.push_back(scope.new_arg(leaf.aval()));
    }
  FlatTree result = body(tracers);
  for (const KeyPath& p : result.paths) debug->result_paths.push_back("result" + keystr(p));
  out.out_structure = result.structure;
  out.num_outputs = result.leaves.size();
  out.closed = scope.finish(result.leaves, std::move(debug));
  return out;
}

}  // namespace cjax::detail
