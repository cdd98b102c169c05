// Helpers shared by the autodiff, partial-eval and dce rules of scan, cond and while.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/builder.h"
#include "passes/jvp.h"

namespace cjax::cf {

// The contiguous groups of a list: [0, a), [a, a+b), [a+b, ...).
template <class T>
std::vector<T> slice(const std::vector<T>& xs, size_t start, size_t count) {
  return std::vector<T>(xs.begin() + static_cast<std::ptrdiff_t>(start),
                        xs.begin() + static_cast<std::ptrdiff_t>(start + count));
}
template <class T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
std::vector<bool> bool_or(const std::vector<bool>& a, const std::vector<bool>& b);
bool bool_leq(const std::vector<bool>& a, const std::vector<bool>& b);  // a implies b

// The loop rules' fixpoint over carries (scan and while: jvp, partial evaluation, dce): a carry
// has the property (a tangent, an unknown value, a use) if its initial value has it or its new
// value has it given the carries that do. `step(carry)` processes the body with the current
// flags; `new_flags(result)` reads the flags of the carries' new values off its result. Grows
// `carry` until a step adds nothing, and returns that last step's result.
template <class Step, class NewFlags>
auto carry_fixpoint(std::vector<bool>& carry, Step step, NewFlags new_flags) {
  for (;;) {
    auto result = step(carry);
    const std::vector<bool> out = new_flags(result);
    if (bool_leq(out, carry)) return result;
    carry = bool_or(carry, out);
  }
}
size_t count(const std::vector<bool>& xs);

// The jaxpr param `key` of an eqn, which must hold a jaxpr without constvars (scan, cond and
// while bodies take their constants as leading inputs).
const Jaxpr& body_param(const Eqn& eqn, std::string_view key);
// cond's branches.
std::vector<const Jaxpr*> branches_param(const Eqn& eqn);
Params with_branches(const Params& params, std::vector<Jaxpr> branches);

// A copy of `j` with fresh variables for every binder (constvars, invars, eqn outputs), so a body
// never shares binders with another jaxpr (passes re-use the known side's residual vars as the
// staged side's invars), and the printer names each body's variables on their own.
Jaxpr fresh_copy(const Jaxpr& j);

// scan's params for a new body: `num_consts`, `num_carry` (and `reverse`) replaced and, when the
// original eqn has a `linear` param, one False per input of the new body.
Params scan_params(const Params& params, Jaxpr body, int64_t num_consts, int64_t num_carry,
                   std::optional<bool> reverse = std::nullopt);

// jvp of a body with per-output instantiation: tangent outputs for the outputs marked in
// `instantiate` are materialised (zeros) even when symbolically zero. Returns the jvp jaxpr and
// which outputs have a tangent output.
JvpJaxpr jvp_instantiate(const Jaxpr& body, const std::vector<bool>& nonzero,
                         const std::vector<bool>& instantiate);

// `nonzero[i]` cleared where input i has no tangent space.
std::vector<bool> differentiable(const Jaxpr& body, std::vector<bool> nonzero);

// An eqn with fresh outputs typed by the primitive's shape rule.
Eqn make_eqn(std::string_view prim, std::vector<Atom> inputs, Params params, const SourceInfo& src);

// For a primitive's partial_eval_jaxpr_custom rule: the known vars the staged eqn reads that are
// not instantiated on the staged side: outputs of the rule's known eqns, and known inputs of the
// original eqn not marked in `inst_in`.
std::vector<Var> staged_residuals(const Eqn& original, const std::vector<bool>& unks_in,
                                  const std::vector<bool>& inst_in,
                                  const std::vector<Eqn>& known_eqns, const Eqn& staged);

}  // namespace cjax::cf
