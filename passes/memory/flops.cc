#include "passes/memory/flops.h"

#include <algorithm>
#include <set>
#include <string>

#include "ir/call_body.h"
#include "ir/primitive.h"

namespace cjax::memory {
namespace {

const std::set<std::string, std::less<>>& layout_ops() {
  static const std::set<std::string, std::less<>> s = {"reshape",
                                                       "transpose",
                                                       "broadcast_in_dim",
                                                       "squeeze",
                                                       "expand_dims",
                                                       "slice",
                                                       "dynamic_slice",
                                                       "dynamic_update_slice",
                                                       "concatenate",
                                                       "pad",
                                                       "rev",
                                                       "gather",
                                                       "copy",
                                                       "copy_p",
                                                       "device_put",
                                                       "name",
                                                       "stop_gradient",
                                                       "optimization_barrier",
                                                       "iota"};
  return s;
}

const std::set<std::string, std::less<>>& reductions() {
  static const std::set<std::string, std::less<>> s = {
      "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
      "reduce_or",  "reduce_xor", "argmax",     "argmin",      "cumsum",
      "cumprod",    "cummax",     "cummin",     "cumlogsumexp"};
  return s;
}

double elements(const ShapedArray& a) {
  return static_cast<double>(a.size());
}

double dot_flops(const Eqn& eqn) {
  const DotDimensionNumbers dn =
      DotDimensionNumbers::from_param(eqn.params.at("dimension_numbers"));
  const ShapedArray& lhs = eqn.inputs.at(0).aval();
  double k = 1;
  for (int64_t d : dn.lhs_contract) k *= static_cast<double>(lhs.shape.at(static_cast<size_t>(d)));
  return 2 * elements(eqn.outputs.at(0).aval()) * k;
}

const Jaxpr* jaxpr_param(const Params& p, std::string_view key) {
  const ParamValue* v = p.find(key);
  return v && v->is<JaxprRef>() ? v->as<JaxprRef>().get() : nullptr;
}

}  // namespace

double eqn_flops(const Eqn& eqn) {
  const std::string_view n = eqn.prim->name;
  if (const Jaxpr* body = call_body(eqn)) return jaxpr_flops(*body);
  if (n == "scan") {
    const Jaxpr* body = jaxpr_param(eqn.params, "jaxpr");
    return body ? static_cast<double>(eqn.params.get_int("length")) * jaxpr_flops(*body) : 0;
  }
  if (n == "while") {
    double f = 0;
    for (const char* key : {"cond_jaxpr", "body_jaxpr"})
      if (const Jaxpr* j = jaxpr_param(eqn.params, key)) f += jaxpr_flops(*j);
    return f;
  }
  if (n == "cond") {
    double f = 0;
    const ParamValue& b = eqn.params.at("branches");
    const std::vector<ParamValue>* items = b.is<ParamTuple>()  ? &b.as<ParamTuple>().items
                                           : b.is<ParamList>() ? &b.as<ParamList>().items
                                                               : nullptr;
    if (items)
      for (const ParamValue& v : *items)
        if (v.is<JaxprRef>() && v.as<JaxprRef>()) f = std::max(f, jaxpr_flops(*v.as<JaxprRef>()));
    return f;
  }
  if (n == "dot_general") return dot_flops(eqn);
  if (layout_ops().count(n)) return 0;
  if (reductions().count(n)) return eqn.inputs.empty() ? 0 : elements(eqn.inputs[0].aval());
  double f = 0;
  for (const Var& o : eqn.outputs) f += elements(o.aval());
  return f;
}

double jaxpr_flops(const Jaxpr& jaxpr) {
  double f = 0;
  for (const Eqn& e : jaxpr.eqns) f += eqn_flops(e);
  return f;
}

}  // namespace cjax::memory
