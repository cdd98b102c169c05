// What the backward pass keeps: one line per residual of a vjp forward program, in JAX's order
// and words (jax.ad_checkpoint.print_saved_residuals): literals, then constants, then arguments,
// then eqn outputs in eqn order.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct SavedResidual {
  ShapedArray aval;
  std::string description;        // "from the argument W1", "output of sin from FILE:L:C (g)", ...
  const Eqn* producer = nullptr;  // the eqn that computes it, when it is an eqn output
};

// `fwd` returns (primal outs..., residuals...); the residuals are its last `num_residuals`
// outvars. `arg_names` name fwd's invars (empty names read "at flattened index {i}", as JAX's
// own message does). reduce_precision eqns are looked through: a residual they produce is
// reported as its input's producer.
std::vector<SavedResidual> saved_residuals(const Jaxpr& fwd, size_t num_residuals,
                                           std::span<const std::string> arg_names);

// "f32[5,4] from the argument W1" lines, newline-terminated.
std::string format_saved_residuals(const std::vector<SavedResidual>& residuals);

}  // namespace cjax
