// Tracing: a thread-local stack of trace frames, each building one jaxpr. While a frame is active,
// every op (cjax::bind) is staged into the innermost frame as an equation instead of running
// (JAX's omnistaging). Values an op meets are lifted into that frame: its own tracers are its
// variables; a concrete scalar becomes a Literal; a concrete non-scalar array becomes a constvar
// with the array as its value; a tracer of an enclosing frame (a closure) becomes a constvar whose
// value is that outer tracer, so a nested trace yields a closed jaxpr plus the captured values.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cjax/array.h"
#include "ir/jaxpr.h"

namespace cjax {

namespace detail {
class Frame;
}

// A jaxpr with the values of its constvars.
struct ClosedTrace {
  Jaxpr jaxpr;                // jaxpr.consts is filled when every const is concrete
  std::vector<Array> consts;  // one per jaxpr.constvars: concrete Arrays or outer tracers
};

// Pushes a new innermost frame; finish() (or the destructor, on an exception) pops it.
class TraceScope {
 public:
  TraceScope();
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  // A new input variable of the jaxpr (in order of the calls).
  Array new_arg(const ShapedArray& aval);
  // Ends the trace: `outs` become the outvars (lifted like operands). Must be the innermost frame.
  ClosedTrace finish(std::span<const Array> outs, std::shared_ptr<const DebugInfo> debug = nullptr);
  size_t level() const;  // 0 for the outermost frame

 private:
  std::shared_ptr<detail::Frame> frame_;
  bool finished_ = false;
};

// Hides the active traces for its lifetime: ops in scope run eagerly (on concrete Arrays) even
// inside make_jaxpr; a trace started in scope is a fresh, outermost one.
class EagerScope {
 public:
  EagerScope();
  ~EagerScope();
  EagerScope(const EagerScope&) = delete;
  EagerScope& operator=(const EagerScope&) = delete;

 private:
  std::vector<std::shared_ptr<detail::Frame>> hidden_;
};

// Traces `fn` on fresh tracers of `in_avals` in a new innermost frame.
ClosedTrace trace_to_jaxpr(const std::function<std::vector<Array>(std::span<const Array>)>& fn,
                           std::span<const ShapedArray> in_avals,
                           std::shared_ptr<const DebugInfo> debug = nullptr);

bool is_tracing();     // some frame is active on this thread
size_t trace_depth();  // number of active frames

}  // namespace cjax
