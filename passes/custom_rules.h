// The rules of custom_jvp and custom_vjp functions (jax.custom_jvp, jax.custom_vjp), as the passes
// see them: param objects (ir/params.h) that trace the user's rule into a jaxpr when a pass needs
// it, for the avals it meets. The front end implements them (cjax/custom_derivatives.h); a
// custom_jvp_call or custom_vjp_call read from text has plain names instead, and no rule.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// custom_jvp_call's `jvp` param: the rule, traced for the avals of the primal operands (the
// operands after the num_consts captured ones) into
// (primals..., tangents...) -> (primal outs..., tangent outs...), every tangent given.
class CustomJvpRule : public ParamObject {
 public:
  virtual Jaxpr jvp_jaxpr(std::span<const ShapedArray> primals) const = 0;
};

// custom_vjp_call's `fwd` param: traced into primals -> (outs..., residuals...).
class CustomVjpFwd : public ParamObject {
 public:
  struct Traced {
    Jaxpr jaxpr;
    size_t num_res = 0;
  };
  virtual Traced fwd_jaxpr(std::span<const ShapedArray> primals) const = 0;
};

// custom_vjp_call's `bwd` param (and custom_lin's): traced into
// (residuals..., output cotangents...) -> (one cotangent per primal operand...).
class CustomVjpBwd : public ParamObject {
 public:
  virtual Jaxpr bwd_jaxpr(std::span<const ShapedArray> residuals,
                          std::span<const ShapedArray> cotangents) const = 0;
};

}  // namespace cjax
