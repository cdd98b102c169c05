#include "cjax/bind.h"

#include <fmt/format.h>

#include "cjax/array_impl.h"
#include "cjax/frame.h"
#include "ir/errors.h"
#include "ir/rules/registry.h"
#include "passes/lax/emitter.h"
#include "runtime/interpreter.h"

namespace cjax {

using detail::ArrayImpl;

std::string location_prefix(const SourceInfo& src) {
  if (!src.known()) return "";
  return src.position() + ": ";
}

void throw_type_error(const SourceInfo& src, std::string_view what) {
  throw TypeError(location_prefix(src) + std::string(what));
}

namespace {

// Rethrows the current cjax exception with the caller's location in front.
[[noreturn]] void rethrow_located(const SourceInfo& src) {
  std::string pre = location_prefix(src);
  try {
    throw;
  } catch (const TypeError& e) {
    throw TypeError(pre + e.what());
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(pre + e.what());
  } catch (const Error& e) {
    throw Error(pre + e.what());
  }
}

bool is_convert(const Primitive& p) {
  return p.name == "convert_element_type";
}

// JAX constant-folds convert_element_type of a Python scalar: the result is a new constant.
Array fold_convert(const Array& x, const ShapedArray& out) {
  runtime::Buffer b = runtime::Buffer::full(ShapedArray(out.dtype, {}), x.buffer().element(0));
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::concrete;
  impl->aval = ShapedArray(out.dtype, {}, out.weak_type);
  impl->buffer = std::move(b);
  impl->python_scalar = true;
  return Array::from_impl(std::move(impl));
}

std::vector<Array> run_eagerly(const Primitive& prim, std::span<const Array> inputs,
                               const Params& params, const std::vector<ShapedArray>& out_avals) {
  std::vector<runtime::Buffer> buffers;
  buffers.reserve(inputs.size());
  for (const Array& x : inputs) {
    if (x.is_tracer())
      throw Error(
          fmt::format("{}: escaped tracer: a traced Array of type {} was used after the "
                      "make_jaxpr (or transformation) that created it had finished",
                      prim.name, x.aval().str_short()));
    if (x.is_abstract())
      throw Error(
          fmt::format("{}: an abstract Array ({}) has no value to compute with; pass it "
                      "to make_jaxpr instead",
                      prim.name, x.aval().str_short()));
    buffers.push_back(x.buffer());
  }
  std::vector<runtime::Buffer> outs = runtime::apply_primitive(prim, params, buffers, out_avals);
  std::vector<Array> result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    result.push_back(Array::from_buffer(std::move(outs[i]), out_avals[i].weak_type));
  return result;
}

}  // namespace

std::vector<Array> bind(const Primitive& prim, std::span<const Array> inputs, Params params,
                        SourceInfo src) {
  try {
    if (prim.canonicalize_params) prim.canonicalize_params(params);
    std::vector<ShapedArray> in_avals;
    in_avals.reserve(inputs.size());
    for (const Array& x : inputs) {
      if (!x.defined()) throw Error(fmt::format("{}: a null cjax::Array operand", prim.name));
      in_avals.push_back(x.aval());
    }
    std::vector<ShapedArray> out_avals = infer_avals(prim, in_avals, params);

    if (out_avals.size() == 1 && lax_ops::forwards(prim, in_avals, out_avals[0]))
      return {inputs[0]};
    if (is_convert(prim) && inputs.size() == 1 && inputs[0].is_python_scalar())
      return {fold_convert(inputs[0], out_avals[0])};

    std::shared_ptr<detail::Frame> frame = detail::innermost_frame();
    if (!frame) return run_eagerly(prim, inputs, params, out_avals);

    Eqn eqn;
    eqn.prim = &prim;
    eqn.inputs.reserve(inputs.size());
    for (const Array& x : inputs) eqn.inputs.push_back(frame->to_atom(x));
    std::vector<Array> outs;
    for (const ShapedArray& a : out_avals) {
      Var v(a);
      eqn.outputs.push_back(v);
      outs.push_back(frame->tracer(std::move(v)));
    }
    eqn.params = std::move(params);
    eqn.source = src;
    frame->eqns.push_back(std::move(eqn));
    return outs;
  } catch (const Error&) {
    rethrow_located(src);
  }
}

std::vector<Array> bind(std::string_view prim_name, std::span<const Array> inputs, Params params,
                        SourceInfo src) {
  const Primitive* prim = find_primitive(prim_name);
  if (!prim)
    throw UnsupportedError(
        fmt::format("{}{}: not a built-in primitive", location_prefix(src), prim_name));
  return cjax::bind(*prim, inputs, std::move(params), src);
}

Array bind1(std::string_view prim_name, std::span<const Array> inputs, Params params,
            SourceInfo src) {
  std::vector<Array> outs = cjax::bind(prim_name, inputs, std::move(params), src);
  if (outs.size() != 1)
    throw Error(fmt::format("{}{}: expected one output, got {}", location_prefix(src), prim_name,
                            outs.size()));
  return outs[0];
}

Array bind1(std::string_view prim_name, std::initializer_list<Array> inputs, Params params,
            SourceInfo src) {
  return bind1(prim_name, std::span<const Array>(inputs.begin(), inputs.size()), std::move(params),
               src);
}

}  // namespace cjax
