// Remat (jax.checkpoint): policy-driven partial evaluation, and the rules of the `remat2`
// primitive (jvp, partial eval, transpose) that make checkpointed functions differentiate the
// way JAX's do.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/policy.h"

namespace cjax {

struct CustomPartialEval {
  // (constvars; known invars...) -> (known outputs..., residuals...)
  Jaxpr known;
  // (residuals..., instantiated invars...) -> (instantiated outputs...)
  Jaxpr staged;
  std::vector<bool> out_unknown;
  std::vector<bool> out_inst;  // output available on the staged side
  size_t num_residuals = 0;
};

// JAX's partial_eval_jaxpr_custom: one walk over the eqns. An eqn with an unknown input is staged
// (its known, not-instantiated inputs become residuals). An all-known eqn is known and `policy`
// is asked: Save -> its outputs are residual candidates; Recompute -> the eqn is also copied to
// the staged side; Offload -> a device_put to the destination memory is added on the known side
// (the copy is the residual) and one back on the staged side. Nested remat2 eqns are split
// recursively with the same (outer) policy. Neither side is DCE'd here.
CustomPartialEval partial_eval_jaxpr_custom(const Jaxpr& jaxpr, const std::vector<bool>& in_unknown,
                                            const std::vector<bool>& in_inst,
                                            const std::vector<bool>& ensure_out_unknown,
                                            const std::vector<bool>& ensure_out_inst,
                                            const PolicyRef& policy);

// A primitive's own rule for partial_eval_jaxpr_custom (scan's: the policy applies inside its
// body). Given the eqn and its inputs' flags, the eqns of the known side, those of the staged
// side, the flags of its outputs, and the known vars the staged eqns read that are not
// instantiated (residuals). Called for every eqn of the primitive, known or not.
struct CustomRuleResult {
  std::vector<Eqn> known_eqns, staged_eqns;
  std::vector<bool> unks_out, inst_out;
  std::vector<Var> residuals;
};
using PartialEvalCustomRule =
    std::function<CustomRuleResult(const Eqn& eqn, const std::vector<bool>& unks_in,
                                   const std::vector<bool>& inst_in, const PolicyRef& policy)>;
// JAX's call_partial_eval_custom_rule, the rule of remat2 and jit: the body is split under the
// same policy and both halves stay eqns of the call's primitive (a staged remat2 is marked
// differentiated). Without it a jit mixing known and unknown inputs would be staged whole, making
// the primal outputs of vjp unknown.
CustomRuleResult call_partial_eval_custom(const Eqn& eqn, const std::vector<bool>& unks_in,
                                          const std::vector<bool>& inst_in,
                                          const PolicyRef& policy);

// Inserts `v = reduce_precision[exponent_bits mantissa_bits] v'` after the producer of every
// floating residual that another known eqn also reads (JAX PR #22244), so the forward pass and the
// saved value agree bit for bit.
Jaxpr insert_reduce_precision(const Jaxpr& known, size_t num_residuals);

// jax.checkpoint at the jaxpr level: the same signature, its body wrapped in one remat2 eqn
// (differentiated=False) with `policy` (nullptr prints as None) and `prevent_cse`. Constvars stay
// on the outside and are passed to the body as its leading inputs. A memory budget is planned
// here (passes/memory/budget_plan.h): the eqn then holds the plan's body and the planned budget.
Jaxpr checkpoint_jaxpr(const Jaxpr& jaxpr, const PolicyRef& policy, bool prevent_cse = true);

// Registers remat2's jvp, partial-eval and transpose rules (called by the rule registries).
void register_remat_rules();

}  // namespace cjax
