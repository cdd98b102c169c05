// A save set as an ordinary policy. A memory budget decides per value, while a policy sees only an
// eqn's primitive, avals and params; so, as a JAX user would with checkpoint_name and
// save_only_these_names, the chosen values are named and the policy saves the named values. The
// names live only while remat2's partial evaluation splits the checkpoint's body: it drops them
// right after (drop_save_set_names), so the programs are those of saving the values themselves.
#pragma once

#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/policy.h"

namespace cjax::memory {

// The `name` every planned value carries (a user's checkpoint_name cannot collide with it: the
// dot-separated prefix is cjax's).
inline constexpr std::string_view kSaveSetName = "cjax.memory_budget.save";

struct NamedSaveSet {
  Jaxpr body;        // the checkpoint's body with the saved values named
  PolicyRef policy;  // what decides under partial evaluation (saved_values_policy, or a fallback)
};

// Saves the values apply_save_set named, recomputes everything else; prints as JAX would print a
// policy function named memory_budget.
const PolicyRef& saved_values_policy();

// The planned eqns of `body` (plan_eqns order) marked in `save` keep their outputs: each output
// gets a `name` eqn right after its producer, read by every later use. Inside the bodies of loops
// and branches, which no save set covers, `fallback` decides; with none, every value there is
// saved. A nested checkpoint or jit is decided by its body's eqns.
NamedSaveSet apply_save_set(const Jaxpr& body, const std::vector<bool>& save,
                            const PolicyRef& fallback);

// `jaxpr` without the names apply_save_set made (every nested jaxpr too): the producer of each
// named value writes the name's output itself. Returned as it is (its bodies still shared) when
// it has none.
Jaxpr drop_save_set_names(Jaxpr jaxpr);

}  // namespace cjax::memory
