#include "passes/saved_residuals.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/primitive.h"

namespace cjax {

std::vector<SavedResidual> saved_residuals(const Jaxpr& fwd, size_t num_residuals,
                                           std::span<const std::string> arg_names) {
  std::vector<SavedResidual> out;
  size_t first = fwd.outvars.size() - std::min(num_residuals, fwd.outvars.size());
  std::unordered_map<Var, Var, VarHash> through_reduce_precision;
  for (const Eqn& e : fwd.eqns)
    if (e.prim->name == "reduce_precision" && e.inputs[0].is_var())
      through_reduce_precision.emplace(e.outputs[0], e.inputs[0].var());

  std::unordered_set<Var, VarHash> res_vars;
  for (size_t i = first; i < fwd.outvars.size(); ++i) {
    const Atom& r = fwd.outvars[i];
    if (r.is_literal()) {
      out.push_back({r.aval(), "from a literal"});
      continue;
    }
    auto it = through_reduce_precision.find(r.var());
    res_vars.insert(it == through_reduce_precision.end() ? r.var() : it->second);
  }
  for (const Var& v : fwd.constvars)
    if (res_vars.count(v)) out.push_back({v.aval(), "from a constant"});
  for (size_t i = 0; i < fwd.invars.size(); ++i) {
    const Var& v = fwd.invars[i];
    if (!res_vars.count(v)) continue;
    std::string name = i < arg_names.size() ? arg_names[i] : "";
    out.push_back({v.aval(), name.empty() ? "from the argument at flattened index {i}"
                                          : "from the argument " + name});
  }
  for (const Eqn& e : fwd.eqns) {
    for (const Var& v : e.outputs) {
      if (!res_vars.count(v)) continue;
      std::string loc = e.source.summarize();
      std::string desc;
      if (e.prim->name == "name")
        desc = fmt::format("named '{}' from {}", e.params.get_string("name"), loc);
      else if (e.prim->name == "jit")
        desc =
            fmt::format("output of jitted function '{}' from {}", e.params.get_string("name"), loc);
      else
        desc = fmt::format("output of {} from {}", e.prim->name, loc);
      out.push_back({v.aval(), std::move(desc), &e});
    }
  }
  return out;
}

std::string format_saved_residuals(const std::vector<SavedResidual>& residuals) {
  std::string out;
  for (const auto& r : residuals) out += fmt::format("{} {}\n", r.aval.str_short(), r.description);
  return out;
}

}  // namespace cjax
