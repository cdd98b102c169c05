#include "cjax/custom_derivatives.h"

#include <fmt/format.h>

#include "cjax/bind.h"

namespace cjax::detail {

CustomBody custom_body(ClosedTrace closed) {
  // JAX's closure conversion: the captured values become the leading operands.
  Jaxpr j = std::move(closed.jaxpr);
  std::vector<Var> invars = std::move(j.constvars);
  invars.insert(invars.end(), j.invars.begin(), j.invars.end());
  j.invars = std::move(invars);
  j.constvars.clear();
  j.consts.clear();
  j.debug = nullptr;
  return {std::make_shared<const Jaxpr>(std::move(j)), std::move(closed.consts)};
}

Jaxpr trace_rule(std::span<const ShapedArray> avals, const FlatBody& body,
                 const std::string& what) {
  EagerScope fresh;  // a rule is traced on its own, whatever trace the pass runs under
  ClosedTrace closed = trace_to_jaxpr(body, avals);
  if (!closed.jaxpr.constvars.empty())
    throw UsageError(fmt::format(
        "{} captures {} array value(s) (the first {}); a rule may capture C++ numbers but not "
        "arrays: pass them as arguments of the function",
        what, closed.jaxpr.constvars.size(), closed.jaxpr.constvars[0].aval().str_short()));
  closed.jaxpr.debug = nullptr;
  return std::move(closed.jaxpr);
}

std::vector<Array> bind_custom_call(const char* prim, const CustomBody& body,
                                    std::span<const Array> leaves, Params params,
                                    const SourceInfo& src) {
  std::vector<Array> inputs = body.consts;
  inputs.insert(inputs.end(), leaves.begin(), leaves.end());
  return cjax::bind(prim, inputs, std::move(params), src);
}

}  // namespace cjax::detail
