// The batching rule of the primitives JAX batches into gather and scatter (dynamic_slice,
// dynamic_update_slice), which cjax does not have: a `scan`
// over the batch that applies the eqn to one example per step. Correct for any pure primitive,
// differentiable (scan is), and compiled as one loop; not the program JAX prints, nor as fast as
// a batched kernel.
#include "ir/rules/registry.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

BatchedOutputs sequential(const BatchRuleArgs& a) {
  std::vector<Atom> consts, xs;
  std::vector<Var> const_vars, x_vars;
  std::vector<Atom> body_inputs;
  for (size_t i = 0; i < a.args.size(); ++i) {
    const ShapedArray& aval = a.args[i].aval();
    if (!a.dims[i]) {
      if (a.args[i].is_literal()) {  // a literal stays one inside the body
        body_inputs.push_back(a.args[i]);
        continue;
      }
      consts.push_back(a.args[i]);
      const_vars.emplace_back(aval);
      body_inputs.push_back(const_vars.back());
      continue;
    }
    xs.push_back(moveaxis(a.b, a.args[i], *a.dims[i], 0));
    Shape one = aval.shape;
    one.erase(one.begin() + *a.dims[i]);
    x_vars.emplace_back(ShapedArray(aval.dtype, one, aval.weak_type));
    body_inputs.push_back(x_vars.back());
  }
  JaxprBuilder body;
  body.set_source(a.eqn.source);
  std::vector<Var> outs = body.emit(*a.eqn.prim, body_inputs, a.eqn.params);
  std::vector<Var> invars = const_vars;
  invars.insert(invars.end(), x_vars.begin(), x_vars.end());
  const size_t n_in = invars.size();
  Jaxpr j = body.build(std::move(invars), std::vector<Atom>(outs.begin(), outs.end()));
  Params params{
      {"_split_transpose", false}, {"jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(j)))},
      {"length", batch_size(a)},   {"linear", ParamValue::bools(std::vector<bool>(n_in, false))},
      {"num_carry", int64_t{0}},   {"num_consts", static_cast<int64_t>(consts.size())},
      {"reverse", false},          {"unroll", int64_t{1}}};
  std::vector<Atom> inputs = consts;
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  std::vector<Atom> ys = a.b.bind(get_primitive("scan"), std::move(inputs), std::move(params));
  return {ys, std::vector<BatchDim>(ys.size(), 0)};
}

}  // namespace

void register_sequential_batch_rules() {
  for (const char* name : {"dynamic_slice", "dynamic_update_slice"})
    define_pass_rules(name).batch = sequential;
}

}  // namespace cjax
