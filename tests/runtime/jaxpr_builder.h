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

// The primitives the hand-built jaxprs use (kernels dispatch by name).
inline const Primitive add_p = make_prim("add");
inline const Primitive sub_p = make_prim("sub");
inline const Primitive mul_p = make_prim("mul");
inline const Primitive lt_p = make_prim("lt");
inline const Primitive sin_p = make_prim("sin");
inline const Primitive psum_p = make_prim("psum");

inline ShapedArray f32a(Shape s = {}) {
  return ShapedArray(DType::f32, std::move(s));
}
inline ShapedArray i32a(Shape s = {}) {
  return ShapedArray(DType::i32, std::move(s));
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
