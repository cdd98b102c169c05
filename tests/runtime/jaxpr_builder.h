// Building small jaxprs by hand for the interpreter tests, with local primitives (kernels dispatch
// by name).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace cjax::runtime::testing {

inline Primitive make_prim(std::string name, bool higher_order = false) {
  Primitive p;
  p.name = std::move(name);
  p.higher_order = higher_order;
  return p;
}

inline Eqn make_eqn(const Primitive& p, std::vector<Atom> in, std::vector<Var> out,
                    Params params = {}) {
  Eqn e;
  e.prim = &p;
  e.inputs = std::move(in);
  e.outputs = std::move(out);
  e.params = std::move(params);
  return e;
}

inline Var var(DType t, Shape s = {}) {
  return Var(ShapedArray(t, std::move(s)));
}

inline std::shared_ptr<const Jaxpr> share(Jaxpr j) {
  return std::make_shared<const Jaxpr>(std::move(j));
}

}  // namespace cjax::runtime::testing
