#include "passes/dce.h"

#include <unordered_set>

namespace cjax {

DceResult dce(const Jaxpr& jaxpr, const std::vector<bool>& used_outputs) {
  std::unordered_set<Var, VarHash> live;
  DceResult r;
  r.jaxpr.constvars = jaxpr.constvars;
  r.jaxpr.consts = jaxpr.consts;
  r.jaxpr.invars = jaxpr.invars;
  r.jaxpr.debug = jaxpr.debug;
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    if (!used_outputs[i]) continue;
    r.jaxpr.outvars.push_back(jaxpr.outvars[i]);
    if (jaxpr.outvars[i].is_var()) live.insert(jaxpr.outvars[i].var());
  }
  std::vector<const Eqn*> kept;
  for (auto it = jaxpr.eqns.rbegin(); it != jaxpr.eqns.rend(); ++it) {
    bool needed = false;
    for (const Var& o : it->outputs) needed |= live.count(o) > 0;
    if (!needed) continue;
    kept.push_back(&*it);
    for (const Atom& in : it->inputs)
      if (in.is_var()) live.insert(in.var());
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) r.jaxpr.eqns.push_back(**it);
  for (const Var& v : jaxpr.invars) r.used_inputs.push_back(live.count(v) > 0);
  return r;
}

Jaxpr dce(const Jaxpr& jaxpr) {
  return dce(jaxpr, std::vector<bool>(jaxpr.outvars.size(), true)).jaxpr;
}

}  // namespace cjax
