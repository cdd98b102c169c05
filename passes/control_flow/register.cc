#include "passes/control_flow/register.h"

#include <algorithm>

#include "ir/primitive.h"

namespace cjax {

void register_control_flow_rules() {
  register_scan_rules();
  register_cond_rules();
  register_while_rules();
}

Eqn control_flow_dce(const Eqn& eqn, const std::vector<bool>& used_outputs) {
  if (std::all_of(used_outputs.begin(), used_outputs.end(), [](bool u) { return u; })) return eqn;
  // Bodies with constvars (never built by cjax, possible in parsed text) are kept whole.
  if (eqn.prim->name == "scan") {
    const JaxprRef& body = eqn.params.get_jaxpr("jaxpr");
    return body && body->constvars.empty() ? scan_dce(eqn, used_outputs) : eqn;
  }
  if (eqn.prim->name == "cond") {
    const ParamValue& v = eqn.params.at("branches");
    if (!v.is<ParamTuple>()) return eqn;
    for (const ParamValue& b : v.as<ParamTuple>().items)
      if (!b.is<JaxprRef>() || !b.as<JaxprRef>() || !b.as<JaxprRef>()->constvars.empty())
        return eqn;
    return cond_dce(eqn, used_outputs);
  }
  return eqn;
}

}  // namespace cjax
