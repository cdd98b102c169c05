#include "passes/positional_collectives.h"

#include <algorithm>

#include "ir/lax_params.h"
#include "ir/rules/registry.h"
#include "ir/sub_jaxprs.h"

namespace cjax {
namespace {

const char* reduction_of(const Eqn& e) {
  const std::string& n = e.prim->name;
  if (n == "psum") return "reduce_sum";
  if (n == "pmax") return "reduce_max";
  if (n == "pmin") return "reduce_min";
  return nullptr;
}

// The positional axes when every axis is positional.
std::optional<std::vector<int64_t>> positional_axes(const Eqn& e) {
  std::vector<int64_t> axes;
  for (const ParamValue& a : e.params.at("axes").as<ParamTuple>().items) {
    if (!a.is<int64_t>()) return std::nullopt;
    axes.push_back(a.as<int64_t>());
  }
  return axes;
}

bool rewritable(const Eqn& e) {
  return reduction_of(e) && positional_axes(e);
}

bool has_rewritable(const Jaxpr& j) {
  return std::any_of(j.eqns.begin(), j.eqns.end(), [](const Eqn& e) {
    if (rewritable(e)) return true;
    for (const Jaxpr* body : sub_jaxprs(e))
      if (has_rewritable(*body)) return true;
    return false;
  });
}

}  // namespace

Jaxpr reduce_positional_collectives(const Jaxpr& jaxpr) {
  if (!has_rewritable(jaxpr)) return jaxpr;
  Jaxpr out = jaxpr;
  out.eqns.clear();
  for (const Eqn& e : jaxpr.eqns) {
    if (!rewritable(e)) {
      Eqn copy = e;
      copy.params = map_sub_jaxprs(e.params, reduce_positional_collectives);
      out.eqns.push_back(std::move(copy));
      continue;
    }
    const Primitive& reduce = get_primitive(reduction_of(e));
    const Params params = lax_params::reduce(*positional_axes(e));
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      Eqn r = e;
      r.prim = &reduce;
      r.params = params;
      r.inputs = {e.inputs[i]};
      r.outputs = {e.outputs[i]};
      out.eqns.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace cjax
