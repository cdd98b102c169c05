// Forward-mode differentiation as a jaxpr-to-jaxpr pass, with symbolic zero tangents: an eqn
// whose inputs all have zero tangents is copied, not differentiated.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/builder.h"

namespace cjax {

// A tangent: an atom, or nullopt for a symbolic zero.
using Tangent = std::optional<Atom>;

struct JvpRuleArgs {
  JaxprBuilder& b;
  const Eqn& eqn;                     // the primal eqn (for its params and output avals)
  std::span<const Atom> primals;      // its inputs
  std::span<const Tangent> tangents;  // one per input
  std::span<const Var> primal_outs;   // its outputs (the primal eqn is already emitted)
};
// Emits the tangent computation of one eqn; returns one tangent per output.
using JvpRule = std::function<std::vector<Tangent>(const JvpRuleArgs&)>;

struct JvpFullResult {
  std::vector<Atom> primal_outs;
  std::vector<Tangent> tangent_outs;
};
// For primitives that emit their primal computation themselves (higher-order ones such as
// remat2, whose primal and tangent parts live in one new eqn).
using JvpFullRule =
    std::function<JvpFullResult(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                                std::span<const Tangent> tangents)>;

struct JvpJaxpr {
  // (constvars; primals..., tangents of the nonzero inputs...) ->
  // (primal outs..., tangents of the outputs marked in out_nonzero...)
  Jaxpr jaxpr;
  std::vector<bool> out_nonzero;
};

// `nonzero[i]`: input i has a tangent (inputs of non-float dtype never do). With `instantiate`,
// zero output tangents are materialised (zeros) so every output has one.
JvpJaxpr jvp_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& nonzero, bool instantiate);

// Whether values of this dtype carry tangents (floating point ones do).
bool has_tangent_space(DType t);

}  // namespace cjax
