// Partial evaluation: splits a jaxpr by which inputs are known into a known jaxpr, computing the
// known outputs plus residuals, and a staged jaxpr that computes the unknown outputs from the
// residuals and the unknown inputs.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct PartialEvalResult {
  // (constvars; known invars...) -> (known outputs..., residuals...)
  Jaxpr known;
  // (residuals..., unknown invars...) -> (unknown outputs...)
  Jaxpr staged;
  std::vector<bool> out_unknown;
  // The residuals, in the order the staged jaxpr first reads them. Each is a var of the known
  // side (an invar, a constvar or an eqn output), re-used as an invar of the staged jaxpr, or a
  // staged invar standing for a constant (`constants_as_residuals`). The known jaxpr's trailing
  // outvars say what each is on the known side.
  std::vector<Var> residuals;
};

// `in_unknown[i]`: invar i is unknown. An eqn is known when all its var inputs are known.
// `instantiate[i]` forces output i onto the staged side even when it is known (it then becomes a
// residual that the staged jaxpr returns). The staged jaxpr is DCE'd; residuals nobody reads are
// dropped; the known jaxpr keeps every known eqn.
// A primitive's own partial-eval rule (remat2's, for instance): given an eqn with some unknown
// inputs, the eqns that compute its known part, the eqn that stages the rest, and where each of
// the original outputs now comes from.
struct PartialEvalRuleResult {
  std::vector<Eqn> known_eqns;
  std::optional<Eqn> staged_eqn;
  std::vector<bool> out_unknown;
  std::vector<Atom> outputs;  // replaces eqn.outputs[i] downstream
};
using PartialEvalRule =
    std::function<PartialEvalRuleResult(const Eqn& eqn, const std::vector<bool>& in_unknown)>;

// `constants_as_residuals`: a staged eqn's operand that is a constant array
// (Literal::array_constant) becomes a residual of its own, a fresh staged invar that the known
// jaxpr returns as the literal: JAX's linearization (of a jit's body, or at the top level)
// captures such a constant rather than inlining it. Off, it stays a literal operand.
PartialEvalResult partial_eval(const Jaxpr& jaxpr, const std::vector<bool>& in_unknown,
                               const std::vector<bool>& instantiate,
                               bool constants_as_residuals = false);

}  // namespace cjax
