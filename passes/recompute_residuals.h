// Cheap residuals recomputed by the backward program. A vjp's forward program returns residuals
// that JAX's partial evaluation chose (and that print_saved_residuals reports): with a tanh GELU,
// six arrays the size of the hidden layer, three of which are a few instructions away from the
// others. Writing those in the forward program and reading them back in the backward one costs
// more memory traffic than recomputing them inside the backward program's elementwise loop, so
// the programs cjax *runs* keep only the values they are computed from. (PyTorch's partitioner
// makes the same trade for pointwise ops; XLA's fusion does it inside a jit.)
//
// A residual is recomputed when it is the output of an elementwise eqn that is not transcendental
// (Primitive::elementwise, Primitive::transcendental: a tanh polynomial in the backward loop costs
// more than reading the tanh back), the backward program reads it only in elementwise eqns (so
// the recomputation fuses into the loop that reads it), and its cone of such eqns in the forward
// program (at most kMaxConeEqns) starts from literals, the forward program's arguments and
// residuals that are kept. The programs still compute the same values; only what lives between
// them changes.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

inline constexpr size_t kMaxConeEqns = 64;

struct ResidualSplit {
  Jaxpr fwd, bwd;            // fwd: primal outputs, then residuals; bwd: residuals, then cotangents
  size_t num_residuals = 0;  // of the new pair
  size_t recomputed = 0;     // residuals the new backward program recomputes
  std::vector<bool> dropped;  // per original residual: recomputed, so no longer passed
};

// `fwd` returns its primal outputs then `num_residuals` residuals; `bwd` takes those residuals,
// then the cotangents. Arguments of `fwd` the recomputation reads become residuals (they cost
// the step no memory: the caller holds them). `arg_available`, when given, says which arguments
// of `fwd` the backward program can be given (a residual whose recomputation reads another is
// kept).
ResidualSplit recompute_cheap_residuals(
    const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals,
    const std::function<bool(const Var&)>& arg_available = nullptr);

}  // namespace cjax
