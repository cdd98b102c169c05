#include "cjax/trace_emitter.h"

#include "cjax/array_impl.h"
#include "cjax/bind.h"
#include "passes/lax/emitter.h"

namespace cjax {

static_assert(lax_ops::Emitter<TraceEmitter>);

std::vector<Array> TraceEmitter::bind(const Primitive& prim, std::vector<Array> inputs,
                                      Params params) {
  return cjax::bind(prim, inputs, std::move(params), src_);
}

Array TraceEmitter::literal(double v, DType dtype, bool weak_type) {
  auto impl = std::make_shared<detail::ArrayImpl>();
  impl->kind = detail::ArrayImpl::Kind::concrete;
  impl->aval = ShapedArray(dtype, {}, weak_type);
  impl->buffer = runtime::Buffer::full(ShapedArray(dtype, {}), v);
  impl->python_scalar = true;
  return Array::from_impl(std::move(impl));
}

}  // namespace cjax
