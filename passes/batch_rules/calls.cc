// Batching rules of the call primitives: jit batches its body and keeps the batch axes its
// outputs come out with (JAX's _pjit_batcher, batch_jaxpr2); remat2 batches its body with every
// batched output moved to axis 0 (ad_checkpoint.remat_vmap, zero_if_mapped).
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/primitive_rules.h"
#include "passes/util.h"

namespace cjax {
namespace {

BatchedOutputs call_with_batched_body(const BatchRuleArgs& a,
                                      std::optional<std::vector<BatchDim>> out_dims) {
  const Jaxpr& body = *a.eqn.params.get_jaxpr("jaxpr");
  BatchedJaxpr batched = batch_jaxpr(body, a.dims, a.axis, std::move(out_dims));
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args.begin(), a.args.end()},
                                    with_jaxpr(a.eqn.params, std::move(batched.jaxpr)));
  return {outs, batched.out_dims};
}

BatchedOutputs jit(const BatchRuleArgs& a) {
  return call_with_batched_body(a, std::nullopt);
}

BatchedOutputs remat(const BatchRuleArgs& a) {
  return call_with_batched_body(a, std::vector<BatchDim>{batching::kZeroIfMapped});
}

}  // namespace

void register_call_batch_rules() {
  define_pass_rules("jit").batch = jit;
  define_pass_rules("remat2").batch = remat;
}

}  // namespace cjax
