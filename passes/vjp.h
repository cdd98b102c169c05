// Reverse mode as passes: vjp = linearize (jvp + partial_eval) + transpose, as in JAX.
#pragma once

#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct LinearizeResult {
  // (constvars; primals...) -> (primal outs..., residuals...)
  Jaxpr fwd;
  // (residuals..., tangents of the differentiable inputs...) -> (tangents of the outputs in
  // out_nonzero...)
  Jaxpr lin;
  size_t num_residuals = 0;
  std::vector<bool> in_differentiable;  // inputs with a tangent (floating point)
  std::vector<bool> out_nonzero;        // outputs whose tangent is not a symbolic zero
};

// Residual order (what JAX's vjp closure holds): the arguments the backward pass reads, in
// argument order, then the other residuals in the order the linear program first reads them.
LinearizeResult linearize_jaxpr(const Jaxpr& jaxpr);

struct VjpResult {
  // (constvars; primals...) -> (primal outs..., residuals...)
  Jaxpr fwd;
  // (residuals..., one cotangent per primal output...) -> (one cotangent per primal input...)
  // Inputs without a tangent space (ints, bools) get zero cotangents of their own type.
  Jaxpr bwd;
  size_t num_residuals = 0;
};

VjpResult vjp_jaxpr(const Jaxpr& jaxpr);

// vjp_jaxpr with a choice of differentiated outputs (`out_differentiated[i]`: output i gets a
// cotangent). With every output differentiated (or an empty mask) it is vjp_jaxpr, JAX's programs;
// otherwise the linear program is cut down to the differentiated outputs before transposing, the
// residuals it no longer reads are dropped from the forward program, and bwd reads
// (residuals..., one cotangent per differentiated output).
VjpResult vjp_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& out_differentiated);

}  // namespace cjax
