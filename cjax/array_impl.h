// The representation behind cjax::Array (internal to compiler/).
#pragma once

#include <cstdint>
#include <memory>

#include "cjax/array.h"
#include "ir/jaxpr.h"

namespace cjax::detail {

class Frame;

struct ArrayImpl {
  enum class Kind { concrete, tracer, abstract };
  Kind kind = Kind::concrete;
  ShapedArray aval;
  // concrete. A donated Array (jit's donate_argnums) gave its buffer to the call: it is deleted,
  // and reading it is an error (Array::is_deleted).
  mutable runtime::Buffer buffer;
  mutable bool deleted = false;
  bool python_scalar = false;
  // tracer: a variable of `frame`'s jaxpr
  std::weak_ptr<Frame> frame;
  uint64_t frame_id = 0;
  Var var;
};

// Takes `x`'s buffer for a call that consumes it (donation) and marks `x`, and every handle to
// it, deleted. Throws cjax::Error for an Array that is not concrete or is deleted already.
runtime::Buffer take_donated_buffer(const Array& x);
// Gives `x` its buffer back after a call that refused to start.
void restore_donated_buffer(const Array& x, runtime::Buffer b);

}  // namespace cjax::detail
