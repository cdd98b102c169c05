// Building small jaxprs by hand for the interpreter tests, with the table's primitives (and an
// opaque one, psum, which has no kernel).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"
#include "ir/rules/registry.h"

namespace cjax::runtime::testing {

inline Primitive make_prim(std::string name, bool higher_order = false) {
  Primitive p;
  p.name = std::move(name);
  p.higher_order = higher_order;
  return p;
}

// The primitives the hand-built jaxprs use.
inline const Primitive& add_p = get_primitive("add");
inline const Primitive& sub_p = get_primitive("sub");
inline const Primitive& mul_p = get_primitive("mul");
inline const Primitive& lt_p = get_primitive("lt");
inline const Primitive& sin_p = get_primitive("sin");
inline const Primitive& unknown_p = opaque_primitive("tpu_custom_call");

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
