#include "passes/builder.h"

#include "ir/rules/registry.h"

namespace cjax {

std::vector<Var> JaxprBuilder::emit(const Primitive& prim, std::vector<Atom> inputs,
                                    Params params) {
  std::vector<ShapedArray> out_avals = infer_avals(prim, avals_of(inputs), params);
  Eqn eqn{&prim, std::move(inputs), {}, std::move(params), source_};
  eqn.outputs.reserve(out_avals.size());
  for (auto& a : out_avals) eqn.outputs.emplace_back(std::move(a));
  std::vector<Var> outs = eqn.outputs;
  eqns_.push_back(std::move(eqn));
  return outs;
}

std::vector<Var> JaxprBuilder::emit(std::string_view prim, std::vector<Atom> inputs,
                                    Params params) {
  return emit(get_primitive(prim), std::move(inputs), std::move(params));
}

Var JaxprBuilder::emit1(std::string_view prim, std::vector<Atom> inputs, Params params) {
  return emit(prim, std::move(inputs), std::move(params)).at(0);
}

Jaxpr JaxprBuilder::build(std::vector<Var> invars, std::vector<Atom> outvars,
                          std::vector<Var> constvars, std::vector<ConstValue> consts) {
  Jaxpr j;
  j.constvars = std::move(constvars);
  j.invars = std::move(invars);
  j.eqns = std::move(eqns_);
  j.outvars = std::move(outvars);
  j.consts = std::move(consts);
  eqns_.clear();
  return j;
}

}  // namespace cjax
