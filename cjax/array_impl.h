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
  // concrete
  runtime::Buffer buffer;
  bool python_scalar = false;
  // tracer: a variable of `frame`'s jaxpr
  std::weak_ptr<Frame> frame;
  uint64_t frame_id = 0;
  Var var;
};

}  // namespace cjax::detail
