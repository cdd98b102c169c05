// The emitter interface of the one lax library (passes/lax/lax.h): whatever stages ops satisfies
// `Emitter`, and the library's functions, written once over it, emit JAX's eqn sequences into it.
// Two emitters exist: the passes' JaxprBuilder (values are Atoms; passes/builder.h) and the front
// end's TraceEmitter (values are cjax::Arrays, staged into the innermost trace with the caller's
// source location, or computed eagerly; cjax/trace_emitter.h).
#pragma once

#include <concepts>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"
#include "ir/rules/registry.h"

namespace cjax::lax_ops {

// E::Value is what one op takes and returns (an Atom, a cjax::Array), and E provides:
//   bind(prim, inputs, params): applies the primitive the way JAX's DynamicJaxprTrace stages it:
//     forwarding the operand where `forwards` says so, and folding a convert_element_type of a
//     host scalar constant into a new constant; otherwise one eqn (or one eager computation);
//   literal(v, dtype, weak_type): a host scalar constant (JAX's np.array(v, dtype), a Literal
//     once staged);
//   is_array(x): JAX's `isinstance(x, Array)`, which lax's early returns test: false for a host
//     constant (a C++ number, JAX's Python scalar), which lax binds even where it would return an
//     Array unchanged.
// and each value has an aval().
template <class E>
concept Emitter = requires(E& e, const typename E::Value& x, const Primitive& prim,
                           std::vector<typename E::Value> inputs, Params params) {
  {
    e.bind(prim, std::move(inputs), std::move(params))
    } -> std::same_as<std::vector<typename E::Value>>;
  { e.literal(1.0, DType::f32, true) } -> std::same_as<typename E::Value>;
  { e.is_array(x) } -> std::same_as<bool>;
  { x.aval() } -> std::convertible_to<const ShapedArray&>;
};

// JAX's staging forwarding rules (pe.forwarding_rules): a convert_element_type to the operand's
// own dtype and weak type, and a broadcast_in_dim to the operand's own shape, are the identity on
// their operand and stage no eqn.
inline bool forwards(const Primitive& prim, std::span<const ShapedArray> in,
                     const ShapedArray& out) {
  if (in.size() != 1) return false;
  if (prim.name == "convert_element_type")
    return in[0].dtype == out.dtype && in[0].weak_type == out.weak_type;
  if (prim.name == "broadcast_in_dim") return in[0].shape == out.shape;
  return false;
}

// The library's way to apply a primitive by name (JAX's `prim.bind(*args, **params)`). Not named
// `bind`: argument-dependent lookup would find std::bind, a better match.
template <Emitter E>
std::vector<typename E::Value> emit(E& e, std::string_view prim,
                                    std::vector<typename E::Value> inputs, Params params = {}) {
  return e.bind(get_primitive(prim), std::move(inputs), std::move(params));
}

template <Emitter E>
typename E::Value emit1(E& e, std::string_view prim, std::vector<typename E::Value> inputs,
                        Params params = {}) {
  return emit(e, prim, std::move(inputs), std::move(params)).at(0);
}

}  // namespace cjax::lax_ops
