#include "cjax/array.h"

#include <fmt/format.h>

#include <ostream>

#include "cjax/array_impl.h"
#include "cjax/frame.h"
#include "ir/errors.h"
#include "ir/limits.h"
#include "ir/rules/registry.h"
#include "runtime/interpreter.h"

namespace cjax {

using detail::ArrayImpl;

namespace {

std::shared_ptr<ArrayImpl> concrete_impl(runtime::Buffer b, bool weak, bool python) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::concrete;
  impl->aval = ShapedArray(b.aval().dtype, b.aval().shape, weak);
  impl->buffer = std::move(b);
  impl->python_scalar = python;
  return impl;
}

const ArrayImpl& checked(const std::shared_ptr<const ArrayImpl>& impl) {
  if (!impl) throw Error("use of a null cjax::Array");
  return *impl;
}

}  // namespace

Array::Array(const ShapeDtype& spec) : impl_(abstract(spec.aval()).impl_) {}

Array Array::from_impl(std::shared_ptr<const ArrayImpl> impl) {
  Array a;
  a.impl_ = std::move(impl);
  return a;
}

Array Array::from_buffer(runtime::Buffer buffer, bool weak_type) {
  if (!buffer) throw Error("Array::from_buffer: empty buffer");
  return from_impl(concrete_impl(std::move(buffer), weak_type, false));
}

Array Array::abstract(ShapedArray aval) {
  // The avals a trace starts from (make_jaxpr's specs, a plugin's) are held to the limits the
  // readers apply; every later one comes from a shape rule, which is too.
  if (std::string why = shape_limit_error(aval.dtype, aval.shape); !why.empty())
    throw TypeError("argument spec: " + why);
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::abstract;
  impl->aval = ShapedArray(aval.dtype, aval.shape, aval.weak_type);
  return from_impl(std::move(impl));
}

Array Array::scalar(double value, DType t) {
  return from_buffer(runtime::Buffer::full(ShapedArray(t, {}), value));
}

Array Array::python_bool(bool v) {
  return from_impl(concrete_impl(
      runtime::Buffer::full(ShapedArray(DType::bool_, {}), v ? 1.0 : 0.0), false, true));
}

Array Array::python_int(int64_t v) {
  int32_t x = static_cast<int32_t>(v);
  return from_impl(concrete_impl(
      runtime::Buffer::from_data<int32_t>(ShapedArray(DType::i32, {}), std::span(&x, 1)), true,
      true));
}

Array Array::python_float(double v) {
  float x = static_cast<float>(v);
  return from_impl(concrete_impl(
      runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {}), std::span(&x, 1)), true,
      true));
}

const ShapedArray& Array::aval() const {
  return checked(impl_).aval;
}

bool Array::is_concrete() const {
  return impl_ && impl_->kind == ArrayImpl::Kind::concrete;
}
bool Array::is_tracer() const {
  return impl_ && impl_->kind == ArrayImpl::Kind::tracer;
}
bool Array::is_abstract() const {
  return impl_ && impl_->kind == ArrayImpl::Kind::abstract;
}
bool Array::is_python_scalar() const {
  return is_concrete() && impl_->python_scalar;
}

namespace {

// Where a tracer's value comes from: the eqn of its frame that made it, or the frame's inputs.
std::string tracer_origin(const ArrayImpl& impl) {
  std::shared_ptr<detail::Frame> frame = impl.frame.lock();
  if (!frame) return "";
  for (auto e = frame->eqns.rbegin(); e != frame->eqns.rend(); ++e)
    for (const Var& v : e->outputs)
      if (v == impl.var)
        return e->source.known() ? fmt::format("; it is the output of {} at {}", e->prim->name,
                                               e->source.summarize())
                                 : fmt::format("; it is the output of {}", e->prim->name);
  for (const Var& v : frame->invars)
    if (v == impl.var) return "; it is an argument of the traced function";
  for (const Var& v : frame->constvars)
    if (v == impl.var) return "; it is a value of an enclosing trace";
  return "";
}

}  // namespace

const runtime::Buffer& Array::values(const SourceInfo& src) const {
  const ArrayImpl& impl = checked(impl_);
  if (impl.kind == ArrayImpl::Kind::tracer)
    throw TypeError(fmt::format(
        "{}cannot read the value of a traced Array ({}) (in make_jaxpr or a transformation){}. "
        "C++ control flow (an if, a loop bound, a number) cannot depend on a traced value: choose "
        "between values with np::where or cjax::cond, and loop with cjax::while_loop, fori_loop "
        "or scan",
        src.known() ? src.position() + ": " : "", impl.aval.str_short(), tracer_origin(impl)));
  if (impl.kind == ArrayImpl::Kind::abstract)
    throw Error(
        fmt::format("{}cannot read the value of an abstract Array ({}): it is a ShapeDtype "
                    "spec without data",
                    src.known() ? src.position() + ": " : "", impl.aval.str_short()));
  if (impl.deleted)
    throw Error(fmt::format(
        "{}the Array ({}) has been deleted: it was donated to a jit call (donate_argnums), "
        "which consumed its buffer; use what the call returned instead",
        src.known() ? src.position() + ": " : "", impl.aval.str_short()));
  return impl.buffer;
}

bool Array::is_deleted() const {
  return impl_ && impl_->deleted;
}

namespace detail {

runtime::Buffer take_donated_buffer(const Array& x) {
  const runtime::Buffer& b = x.buffer();  // throws for tracers, abstract and deleted Arrays
  runtime::Buffer taken = b;
  x.impl()->buffer = runtime::Buffer();
  x.impl()->deleted = true;
  return taken;
}

void restore_donated_buffer(const Array& x, runtime::Buffer b) {
  x.impl()->buffer = std::move(b);
  x.impl()->deleted = false;
}

}  // namespace detail

const runtime::Buffer& Array::buffer() const {
  return values(SourceInfo());
}

double Array::item(SourceInfo src) const {
  const runtime::Buffer& b = values(src);
  if (aval().size() != 1)
    throw Error(fmt::format("{}item(): the Array has {} elements ({}), not one",
                            src.known() ? src.position() + ": " : "", aval().size(),
                            aval().str_short()));
  return b.element(0);
}

std::ostream& operator<<(std::ostream& os, const Array& a) {
  return os << a.to_string();
}

namespace detail {

DType canonical_dtype(DType natural) {
  switch (natural) {
    case DType::f64:
      return DType::f32;
    case DType::i64:
      return DType::i32;
    case DType::u64:
      return DType::u32;
    default:
      return natural;
  }
}

namespace {

template <class T>
runtime::Buffer typed_buffer(const void* data, size_t n, const ShapedArray& aval) {
  return runtime::Buffer::from_data<T>(aval, std::span(static_cast<const T*>(data), n));
}

runtime::Buffer natural_buffer(const void* data, DType natural, size_t n, const Shape& shape) {
  ShapedArray aval(natural, shape);
  switch (natural) {
    case DType::bool_:
      return typed_buffer<bool>(data, n, aval);
    case DType::i8:
      return typed_buffer<int8_t>(data, n, aval);
    case DType::i16:
      return typed_buffer<int16_t>(data, n, aval);
    case DType::i32:
      return typed_buffer<int32_t>(data, n, aval);
    case DType::i64:
      return typed_buffer<int64_t>(data, n, aval);
    case DType::u8:
      return typed_buffer<uint8_t>(data, n, aval);
    case DType::u16:
      return typed_buffer<uint16_t>(data, n, aval);
    case DType::u32:
      return typed_buffer<uint32_t>(data, n, aval);
    case DType::u64:
      return typed_buffer<uint64_t>(data, n, aval);
    case DType::f32:
      return typed_buffer<float>(data, n, aval);
    case DType::f64:
      return typed_buffer<double>(data, n, aval);
    default:
      break;
  }
  throw Error(fmt::format("cjax::array: unsupported element type {}", short_name(natural)));
}

}  // namespace

Array make_array(const void* data, DType natural, size_t n, const Shape& shape, DType target) {
  ShapedArray want(target, shape);
  for (int64_t d : shape)
    if (d < 0)
      throw TypeError(fmt::format("cjax::array: negative dimension in shape {}", shape_str(shape)));
  if (want.size() != static_cast<int64_t>(n))
    throw TypeError(
        fmt::format("cjax::array: {} elements given for shape {}", n, shape_str(shape)));
  runtime::Buffer b = natural_buffer(data, natural, n, shape);
  if (target != natural) {
    // Data conversion happens on the host, never in a trace (like NumPy before jnp.array).
    Params p{{"new_dtype", target}, {"weak_type", false}, {"sharding", NoneParam{}}};
    runtime::Buffer in[] = {b};
    ShapedArray out_aval[] = {want};
    b = runtime::apply_primitive(get_primitive("convert_element_type"), p, in, out_aval).at(0);
  }
  return Array::from_buffer(std::move(b));
}

}  // namespace detail

}  // namespace cjax
