// The rules of custom_jvp and custom_vjp functions (jax.custom_jvp, jax.custom_vjp), as the passes
// see them: param objects (ir/params.h) that trace the user's rule into a jaxpr when a pass needs
// it, for the avals it meets. The front end implements them (cjax/custom_derivatives.h); a
// custom_jvp_call or custom_vjp_call read from text has plain names instead, and no rule.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// custom_jvp_call's `jvp` param: the rule, traced for the avals of the primal operands (the
// operands after the num_consts captured ones) into
// (primals..., tangents...) -> (primal outs..., tangent outs...), the tangents given being those
// not marked in `zeros` (with symbolic_zeros=False the pass instantiates them all).
class CustomJvpRule : public ParamObject {
 public:
  virtual Jaxpr jvp_jaxpr(std::span<const ShapedArray> primals,
                          std::span<const bool> zeros) const = 0;
};

// custom_vjp_call's `fwd` param: traced into primals -> (outs..., residuals...); `perturbed`
// says which primals have a tangent (what a fwd with symbolic_zeros=True may ask).
class CustomVjpFwd : public ParamObject {
 public:
  struct Traced {
    Jaxpr jaxpr;
    size_t num_res = 0;
    // The bwd that reads these residuals when it is not the call's own (a batched fwd's
    // residuals need a batched bwd: passes/batch_rules/custom.cc).
    std::shared_ptr<const ParamObject> bwd;
  };
  virtual Traced fwd_jaxpr(std::span<const ShapedArray> primals,
                           std::span<const bool> perturbed) const = 0;
};

// custom_vjp_call's `bwd` param (and custom_lin's): traced into
// (residuals..., output cotangents...) -> (one cotangent per primal operand...), the
// cotangents given being those not marked in `zeros`.
class CustomVjpBwd : public ParamObject {
 public:
  virtual Jaxpr bwd_jaxpr(std::span<const ShapedArray> residuals,
                          std::span<const ShapedArray> cotangents,
                          std::span<const bool> zeros) const = 0;
};

// A custom call's rule param (`jvp`, `fwd`, `bwd`), or null when it was read from text.
template <class Rule>
std::shared_ptr<const Rule> custom_rule_ptr(const Eqn& eqn, const char* key) {
  const ParamValue* v = eqn.params.find(key);
  if (!v || !v->is<ObjectRef>()) return nullptr;
  return std::dynamic_pointer_cast<const Rule>(v->as<ObjectRef>());
}
template <class Rule>
const Rule* custom_rule(const Eqn& eqn, const char* key) {
  return custom_rule_ptr<Rule>(eqn, key).get();  // the eqn keeps the rule alive
}

// The number of captured values among a custom call's leading operands.
inline size_t custom_num_consts(const Eqn& eqn) {
  const ParamValue* v = eqn.params.find("num_consts");
  return v && v->is<int64_t>() ? static_cast<size_t>(v->as<int64_t>()) : 0;
}

// The custom function's name, for messages.
inline std::string custom_name(const Eqn& eqn) {
  const ParamValue* v = eqn.params.find("name");
  return v && v->is<std::string>() ? v->as<std::string>() : std::string("<unnamed>");
}

inline bool custom_symbolic_zeros(const Eqn& eqn) {
  const ParamValue* v = eqn.params.find("symbolic_zeros");
  return v && v->is<bool>() && v->as<bool>();
}

}  // namespace cjax
