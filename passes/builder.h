// JaxprBuilder: emits equations into a jaxpr under construction, taking each output's aval from
// its primitive's shape rule. Every pass that creates eqns builds through it.
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
  // Appends an eqn as it is (its outputs already exist).
  void append(Eqn eqn) { eqns_.push_back(std::move(eqn)); }

  std::vector<Eqn>& eqns() { return eqns_; }
  // Moves the eqns out into a jaxpr with the given signature.
  Jaxpr build(std::vector<Var> invars, std::vector<Atom> outvars, std::vector<Var> constvars = {},
              std::vector<ConstValue> consts = {});

 private:
  std::vector<Eqn> eqns_;
  SourceInfo source_;
};

}  // namespace cjax
