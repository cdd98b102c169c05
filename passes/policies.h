// JAX's checkpoint policies (jax.checkpoint_policies), and user-written ones. A policy is asked,
// for each primal eqn inside a checkpoint, whether its outputs may be saved for the backward pass
// (Save), must be recomputed there (Recompute), or moved to another memory kind and back
// (Offload). A policy only says what *may* be saved: a value is a residual only if the backward
// program reads it.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/policy.h"

namespace cjax::policies {

// A user-written policy: (primitive, input avals, params) -> decision.
using PolicyFn = std::function<PolicyDecision(
    const Primitive& prim, std::span<const ShapedArray> in_avals, const Params& params)>;
// `name` is what the policy prints as inside `remat2[... policy=...]`.
PolicyRef make_policy(std::string name, PolicyFn fn);
// A policy written as a predicate: true = Save, false = Recompute.
PolicyRef make_bool_policy(
    std::string name,
    std::function<bool(const Primitive&, std::span<const ShapedArray>, const Params&)> fn);

PolicyDecision save();
PolicyDecision recompute();
PolicyDecision offload(std::string src, std::string dst);

PolicyRef everything_saveable();
PolicyRef nothing_saveable();
PolicyRef dots_saveable();  // alias: checkpoint_dots
PolicyRef checkpoint_dots();
PolicyRef dots_with_no_batch_dims_saveable();  // alias: checkpoint_dots_with_no_batch_dims
PolicyRef checkpoint_dots_with_no_batch_dims();
PolicyRef save_anything_except_these_names(std::vector<std::string> names);
PolicyRef save_anything_but_these_names(std::vector<std::string> names);  // alias
PolicyRef save_any_names_but_these(std::vector<std::string> names);
PolicyRef save_only_these_names(std::vector<std::string> names);
PolicyRef offload_dot_with_no_batch_dims(std::string offload_src, std::string offload_dst);
// Throws cjax::UsageError when a name is in both sets.
PolicyRef save_and_offload_only_these_names(std::vector<std::string> names_which_can_be_saved,
                                            std::vector<std::string> names_which_can_be_offloaded,
                                            std::string offload_src, std::string offload_dst);
// Saves what either saves; both must answer Save or Recompute (an Offload answer is an error).
PolicyRef save_from_both_policies(PolicyRef policy_1, PolicyRef policy_2);

// Policies by name, for the CLI: `names` feeds the name policies, `offload_names` the offload
// ones. Throws cjax::UsageError listing the valid names for an unknown one.
PolicyRef by_name(const std::string& name, const std::vector<std::string>& names = {},
                  const std::vector<std::string>& offload_names = {});
std::vector<std::string> names();
// Whether the policy of that name (as by_name takes it) reads `names`, and `offload_names`.
bool uses_names(const std::string& name);
bool uses_offload_names(const std::string& name);

// Asks `policy` about an eqn and checks the answer (a kind out of range, or an Offload without
// memory kinds, is a cjax::TypeError naming the policy and the primitive). nullptr means
// nothing_saveable, JAX's default.
PolicyDecision decide(const PolicyRef& policy, const Primitive& prim,
                      std::span<const ShapedArray> in_avals, const Params& params);

}  // namespace cjax::policies
