// JaxprBuilder: emits equations into a jaxpr under construction, taking each output's aval from
// its primitive's shape rule. Every pass that creates eqns builds through it. It is an Emitter of
// the lax library (passes/lax/lax.h), which the autodiff rules call with it.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace cjax {

class JaxprBuilder {
 public:
  JaxprBuilder() = default;

  // The source location stamped on eqns emitted from now on (passes forward the location of the
  // eqn they are transforming, so reports point at the user's code).
  void set_source(const SourceInfo& src) { source_ = src; }
  const SourceInfo& source() const { return source_; }

  std::vector<Var> emit(const Primitive& prim, std::vector<Atom> inputs, Params params = {});
  std::vector<Var> emit(std::string_view prim, std::vector<Atom> inputs, Params params = {});
  Var emit1(std::string_view prim, std::vector<Atom> inputs, Params params = {});
  // The Emitter interface (passes/lax/emitter.h). bind() stages as JAX's trace does: a
  // forwarding op returns its operand, a convert_element_type of a scalar Literal folds into a
  // new Literal, anything else is emitted. is_array() is true even of a Literal: where a rule
  // hands lax a constant whose early return tests it, JAX's is an Array too (zeros that
  // lax.broadcast's asarray instantiated).
  using Value = Atom;
  std::vector<Atom> bind(const Primitive& prim, std::vector<Atom> inputs, Params params);
  static Atom literal(double v, DType dtype, bool weak_type) {
    return Literal::of(v, dtype, weak_type);
  }
  static bool is_array(const Atom&) { return true; }

  // Appends an eqn as it is (its outputs already exist).
  void append(Eqn eqn) { eqns_.push_back(std::move(eqn)); }

  std::vector<Eqn>& eqns() { return eqns_; }
  // Moves the eqns out into a jaxpr with the given signature.
  Jaxpr build(std::vector<Var> invars, std::vector<Atom> outvars, std::vector<Var> constvars = {},
              std::vector<ConstValue> consts = {});

 private:
  std::vector<Var> emit_typed(const Primitive& prim, std::vector<Atom> inputs, Params params,
                              std::vector<ShapedArray> out_avals);

  std::vector<Eqn> eqns_;
  SourceInfo source_;
};

}  // namespace cjax
