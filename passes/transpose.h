// Transposition of linear jaxprs (reverse mode): cotangents flow from outputs to the linear
// inputs, accumulated with add_any; non-linear eqns that feed linear ones are evaluated forward
// first.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/builder.h"

namespace cjax {

// A cotangent: an atom, or nullopt for a symbolic zero.
using Cotangent = std::optional<Atom>;

// One input of an eqn being transposed: linear (its value is unknown; only its aval is) or a
// known non-linear value.
struct TransposeArg {
  bool linear;
  Atom value;  // the input atom; meaningful only when !linear
  const ShapedArray& aval() const { return value.aval(); }
};

struct TransposeRuleArgs {
  JaxprBuilder& b;
  const Eqn& eqn;
  std::span<const TransposeArg> args;
  std::span<const Cotangent> cts;  // one per output; at least one is nonzero
};
// Returns one cotangent per input (nullopt for non-linear inputs and zero cotangents).
using TransposeRule = std::function<std::vector<Cotangent>(const TransposeRuleArgs&)>;

// Transposes `jaxpr` with respect to the invars marked in `linear`. The result takes
// (non-linear invars..., one cotangent per outvar...) and returns the cotangents of the linear
// invars (zeros where none flows). Constvars stay constvars.
// With `ct_is_zero`, also reports for each linear invar whether no cotangent reached it (its
// output is then an instantiated zero).
Jaxpr transpose_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& linear,
                      std::vector<bool>* ct_is_zero = nullptr);

}  // namespace cjax
