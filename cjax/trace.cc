#include "cjax/trace.h"

#include <fmt/format.h>

#include <atomic>

#include "cjax/array_impl.h"
#include "cjax/frame.h"
#include "ir/errors.h"

namespace cjax {
namespace detail {
namespace {

thread_local std::vector<std::shared_ptr<Frame>> g_stack;
std::atomic<uint64_t> g_next_frame_id{1};

[[noreturn]] void escaped(const ShapedArray& aval) {
  throw Error(
      fmt::format("escaped tracer: a traced Array of type {} was used outside the make_jaxpr (or "
                  "transformation) that created it",
                  aval.str_short()));
}

}  // namespace

std::shared_ptr<Frame> innermost_frame() {
  return g_stack.empty() ? nullptr : g_stack.back();
}

Literal literal_of(const Array& scalar) {
  const runtime::Buffer& b = scalar.buffer();
  const ShapedArray& aval = scalar.aval();
  Literal l;
  if (aval.dtype == DType::bool_) {
    l = Literal::of_bool(b.element(0) != 0.0);
  } else if (is_integer(aval.dtype)) {
    l = Literal::of_int(static_cast<int64_t>(b.element(0)), aval.dtype, aval.weak_type);
  } else {
    l = Literal::of(b.element(0), aval.dtype, aval.weak_type);
  }
  l.aval = ShapedArray(aval.dtype, {}, aval.weak_type);
  return l;
}

Var Frame::add_const(const void* key, const Array& value) {
  auto it = const_index_.find(key);
  if (it != const_index_.end()) return constvars[it->second];
  Var v(ShapedArray(value.dtype(), value.shape(), value.weak_type()));
  const_index_.emplace(key, constvars.size());
  constvars.push_back(v);
  const_values.push_back(value);
  return v;
}

Atom Frame::to_atom(const Array& x) {
  if (!x.defined()) throw Error("a null cjax::Array was used as an operand");
  const ArrayImpl& impl = *x.impl();
  switch (impl.kind) {
    case ArrayImpl::Kind::tracer: {
      std::shared_ptr<Frame> owner = impl.frame.lock();
      if (!owner || !owner->alive || owner->level > level) escaped(impl.aval);
      if (owner.get() == this) return impl.var;
      // A closure over a tracer of an enclosing trace.
      return add_const(impl.var.id(), x);
    }
    case ArrayImpl::Kind::concrete:
      if (impl.deleted) (void)x.buffer();  // throws: a donated Array has no value
      // Numeric scalars are literals, as in JAX; a key is not a number (a constvar).
      if (impl.aval.rank() == 0 && impl.aval.dtype != DType::key_fry) return literal_of(x);
      return add_const(&impl, x);
    case ArrayImpl::Kind::abstract:
      throw Error(fmt::format(
          "an abstract Array ({}) has no value; it can only be an argument of make_jaxpr",
          impl.aval.str_short()));
  }
  throw Error("unreachable");
}

Array Frame::tracer(Var var) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::tracer;
  impl->aval = var.aval();
  impl->frame = weak_from_this();
  impl->frame_id = id;
  impl->var = std::move(var);
  return Array::from_impl(std::move(impl));
}

}  // namespace detail

using detail::Frame;

TraceScope::TraceScope()
    : frame_(std::make_shared<Frame>(detail::g_next_frame_id++, detail::g_stack.size())) {
  detail::g_stack.push_back(frame_);
}

TraceScope::~TraceScope() {
  if (finished_) return;
  frame_->alive = false;
  // Unwinding after an exception: drop this frame and anything left above it.
  auto& stack = detail::g_stack;
  while (!stack.empty()) {
    bool mine = stack.back() == frame_;
    stack.back()->alive = false;
    stack.pop_back();
    if (mine) break;
  }
}

size_t TraceScope::level() const {
  return frame_->level;
}

Array TraceScope::new_arg(const ShapedArray& aval) {
  if (finished_) throw Error("TraceScope::new_arg after finish()");
  Var v(ShapedArray(aval.dtype, aval.shape, aval.weak_type));
  frame_->invars.push_back(v);
  return frame_->tracer(std::move(v));
}

ClosedTrace TraceScope::finish(std::span<const Array> outs,
                               std::shared_ptr<const DebugInfo> debug) {
  if (finished_) throw Error("TraceScope::finish called twice");
  if (detail::g_stack.empty() || detail::g_stack.back() != frame_)
    throw Error("TraceScope::finish: the trace is not the innermost one");
  ClosedTrace out;
  for (const Array& o : outs) out.jaxpr.outvars.push_back(frame_->to_atom(o));
  out.jaxpr.invars = std::move(frame_->invars);
  out.jaxpr.eqns = std::move(frame_->eqns);
  out.jaxpr.constvars = std::move(frame_->constvars);
  out.consts = std::move(frame_->const_values);
  bool all_concrete = true;
  for (const Array& c : out.consts) all_concrete = all_concrete && c.is_concrete();
  if (all_concrete)
    for (const Array& c : out.consts) out.jaxpr.consts.push_back(c.buffer().to_const());
  out.jaxpr.debug = std::move(debug);
  frame_->alive = false;
  detail::g_stack.pop_back();
  finished_ = true;
  return out;
}

ClosedTrace trace_to_jaxpr(const std::function<std::vector<Array>(std::span<const Array>)>& fn,
                           std::span<const ShapedArray> in_avals,
                           std::shared_ptr<const DebugInfo> debug) {
  TraceScope scope;
  std::vector<Array> args;
  args.reserve(in_avals.size());
  for (const ShapedArray& a : in_avals) args.push_back(scope.new_arg(a));
  std::vector<Array> outs = fn(args);
  return scope.finish(outs, std::move(debug));
}

EagerScope::EagerScope() : hidden_(std::move(detail::g_stack)) {
  detail::g_stack.clear();
}

EagerScope::~EagerScope() {
  // Frames started in scope and not finished (an exception) are abandoned.
  for (auto& f : detail::g_stack) f->alive = false;
  detail::g_stack = std::move(hidden_);
}

bool is_tracing() {
  return !detail::g_stack.empty();
}
size_t trace_depth() {
  return detail::g_stack.size();
}

}  // namespace cjax
