#include "ir/call_body.h"

#include "ir/primitive.h"

namespace cjax {

const Jaxpr* call_body(const Primitive& prim, const Params& params) {
  if (prim.call_body.empty()) return nullptr;
  const ParamValue* v = params.find(prim.call_body);
  return v && v->is<JaxprRef>() ? v->as<JaxprRef>().get() : nullptr;
}

const Jaxpr* call_body(const Eqn& eqn) {
  return eqn.prim ? call_body(*eqn.prim, eqn.params) : nullptr;
}

}  // namespace cjax
