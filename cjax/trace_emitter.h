// The front end's Emitter of the lax library (passes/lax/emitter.h): ops on cjax::Arrays go
// through cjax::bind with the caller's source location, so they are staged into the innermost
// trace (or run eagerly outside any). cjax/lax.cc's functions are the library's over it.
#pragma once

#include <vector>

#include "cjax/array.h"
#include "ir/params.h"
#include "ir/primitive.h"
#include "ir/source_info.h"

namespace cjax {

class TraceEmitter {
 public:
  using Value = Array;

  explicit TraceEmitter(SourceInfo src) : src_(std::move(src)) {}

  // cjax::bind, which forwards and folds as JAX's staging does (cjax/bind.h).
  std::vector<Array> bind(const Primitive& prim, std::vector<Array> inputs, Params params);
  // A C++ number of that dtype and weak type (folded by conversions, a Literal once staged).
  Array literal(double v, DType dtype, bool weak_type);
  // Every Array except a C++ number (JAX's Python scalar).
  static bool is_array(const Array& x) { return !x.is_python_scalar(); }

 private:
  SourceInfo src_;
};

}  // namespace cjax
