#include "passes/builder.h"

#include "ir/rules/registry.h"
#include "passes/lax/emitter.h"

namespace cjax {

static_assert(lax_ops::Emitter<JaxprBuilder>);

namespace {

// JAX's constant folding of convert_element_type: a new literal of the converted value.
Atom fold_convert(const Literal& l, DType dtype, bool weak_type) {
  if (is_floating(dtype)) return Literal::of(l.as_double(), dtype, weak_type);
  if (dtype == DType::bool_) return Literal::of(l.as_double() != 0.0 ? 1.0 : 0.0, dtype);
  if (!is_floating(l.aval.dtype)) return Literal::of_int(l.as_int(), dtype, weak_type);
  // float -> integer: truncation toward zero, as numpy's astype.
  return Literal::of_int(static_cast<int64_t>(l.as_double()), dtype, weak_type);
}

}  // namespace

std::vector<Var> JaxprBuilder::emit(const Primitive& prim, std::vector<Atom> inputs,
                                    Params params) {
  std::vector<ShapedArray> out_avals = infer_avals(prim, avals_of(inputs), params);
  return emit_typed(prim, std::move(inputs), std::move(params), std::move(out_avals));
}

std::vector<Atom> JaxprBuilder::bind(const Primitive& prim, std::vector<Atom> inputs,
                                     Params params) {
  std::vector<ShapedArray> in_avals = avals_of(inputs);
  std::vector<ShapedArray> out_avals = infer_avals(prim, in_avals, params);
  if (out_avals.size() == 1 && lax_ops::forwards(prim, in_avals, out_avals[0])) return {inputs[0]};
  if (prim.name == "convert_element_type" && inputs.size() == 1 && inputs[0].is_literal() &&
      !inputs[0].literal().elided && in_avals[0].shape.empty())
    return {fold_convert(inputs[0].literal(), out_avals[0].dtype, out_avals[0].weak_type)};
  std::vector<Var> outs =
      emit_typed(prim, std::move(inputs), std::move(params), std::move(out_avals));
  return {outs.begin(), outs.end()};
}

std::vector<Var> JaxprBuilder::emit_typed(const Primitive& prim, std::vector<Atom> inputs,
                                          Params params, std::vector<ShapedArray> out_avals) {
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
