// Per-primitive data that a layer above ir/ keeps for the built-in primitives (the transformation
// rules in passes/, the kernels in runtime/, the lowerings in compiler/): one slot per primitive,
// found from the primitive itself (its index in the table) rather than by looking its name up.
#pragma once

#include <string_view>
#include <vector>

#include "ir/primitive.h"
#include "ir/rules/registry.h"

namespace cjax {

template <class T>
class PerPrimitive {
 public:
  PerPrimitive() : slots_(builtin_primitive_count()) {}

  // The slot of the built-in primitive `name`, for its family file to fill in. Throws
  // cjax::UnsupportedError when no such primitive is built in.
  T& define(std::string_view name) { return slots_[get_primitive(name).index]; }

  // nullptr for primitives that are not built in (opaque ones read from text).
  const T* find(const Primitive& prim) const {
    return prim.index < slots_.size() ? &slots_[prim.index] : nullptr;
  }

 private:
  std::vector<T> slots_;
};

}  // namespace cjax
