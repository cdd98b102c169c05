#include "passes/memory/flops.h"

#include "ir/call_body.h"
#include "ir/primitive.h"

namespace cjax::memory {
namespace {

double elements(const ShapedArray& a) {
  return static_cast<double>(a.size());
}

}  // namespace

double eqn_flops(const Eqn& eqn) {
  if (const Jaxpr* body = call_body(eqn)) return jaxpr_flops(*body);
  switch (eqn.prim->flop_count) {
    case FlopCount::none:
      return 0;
    case FlopCount::per_input_element:
      return eqn.inputs.empty() ? 0 : elements(eqn.inputs[0].aval());
    case FlopCount::rule:
      if (eqn.prim->flop_rule)
        return eqn.prim->flop_rule(eqn, [](const Jaxpr& j) { return jaxpr_flops(j); });
      break;
    case FlopCount::per_output_element:
      break;
  }
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
