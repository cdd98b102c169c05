// Shared helpers for the runtime tests: buffers from literals, and running one primitive by name
// (kernels dispatch by name, so a local Primitive is enough; no primitive table needed).
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"
#include "ir/rules/registry.h"
#include "runtime/buffer.h"
#include "runtime/interpreter.h"

namespace cjax::runtime::testing {

template <class T>
Buffer make(DType t, Shape s, std::vector<T> data) {
  return Buffer::from_data<T>(ShapedArray(t, std::move(s)), std::span<const T>(data));
}
inline Buffer f32(Shape s, std::vector<float> d) {
  return make<float>(DType::f32, std::move(s), d);
}
inline Buffer f64(Shape s, std::vector<double> d) {
  return make<double>(DType::f64, std::move(s), d);
}
inline Buffer i32(Shape s, std::vector<int32_t> d) {
  return make<int32_t>(DType::i32, std::move(s), d);
}
inline Buffer i64(Shape s, std::vector<int64_t> d) {
  return make<int64_t>(DType::i64, std::move(s), d);
}
inline Buffer u8(Shape s, std::vector<uint8_t> d) {
  return make<uint8_t>(DType::u8, std::move(s), d);
}
inline Buffer boolean(Shape s, std::initializer_list<bool> d) {
  std::unique_ptr<bool[]> a(new bool[d.size()]);
  std::copy(d.begin(), d.end(), a.get());
  return Buffer::from_data<bool>(ShapedArray(DType::bool_, std::move(s)),
                                 std::span<const bool>(a.get(), d.size()));
}
inline Buffer f32_scalar(float v) {
  return f32({}, {v});
}
inline Buffer i32_scalar(int32_t v) {
  return i32({}, {v});
}

// The primitive of the table, or for a name it does not know the opaque one the parser would
// make: call-like primitives are run by their trait, other kernels are found by name.
inline const Primitive& primitive_named(const std::string& name) {
  const Primitive* known = find_primitive(name);
  return known ? *known : opaque_primitive(name);
}

inline std::vector<Buffer> apply(const std::string& name, const Params& params,
                                 std::vector<Buffer> inputs, std::vector<ShapedArray> outs) {
  return apply_primitive(primitive_named(name), params, inputs, outs);
}
inline Buffer apply1(const std::string& name, const Params& params, std::vector<Buffer> inputs,
                     ShapedArray out) {
  return apply(name, params, std::move(inputs), {std::move(out)})[0];
}
// Same shape and dtype as the first input.
inline Buffer apply_like(const std::string& name, std::vector<Buffer> inputs,
                         const Params& params = {}) {
  ShapedArray out = inputs.at(0).aval();
  return apply1(name, params, std::move(inputs), out);
}

inline std::vector<double> vals(const Buffer& b) {
  return b.to_doubles();
}

// Element-wise closeness for float results.
inline bool close(const std::vector<double>& got, const std::vector<double>& want,
                  double tol = 1e-6) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && !(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))))
      return false;
  return true;
}

}  // namespace cjax::runtime::testing
