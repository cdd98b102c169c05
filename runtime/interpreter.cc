#include "runtime/interpreter.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <typeinfo>
#include <unordered_map>

#include "ir/call_body.h"
#include "ir/errors.h"
#include "ir/liveness.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_table.h"
#include "runtime/scalar_convert.h"

namespace cjax::runtime {
namespace {

// A literal as a buffer of its aval, converting from the exact stored value (an int64 literal
// does not pass through double).
Buffer materialize(const Literal& lit) {
  if (lit.elided)
    throw UnsupportedError(fmt::format("interpreter: cannot evaluate the elided constant [...]:{}",
                                       lit.aval.str_short()));
  Buffer b = Buffer::allocate(lit.aval);
  if (lit.aval.dtype == DType::key_fry) {
    // A key's only literal is the zero cotangent vjp gives a key argument (JAX's float0 zeros):
    // the key whose words are both 0.
    if (lit.as_int() != 0)
      throw UnsupportedError(
          fmt::format("interpreter: a key<fry> literal must be 0, got {}", lit.as_int()));
    std::memset(b.data(), 0, b.nbytes());
    return b;
  }
  dispatch<kStorage>(lit.aval.dtype, "a literal", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = std::visit([](auto x) { return convert_scalar<T>(x); }, lit.value);
    T* p = b.as<T>();
    for (int64_t i = 0, n = lit.aval.size(); i < n; ++i) p[i] = v;
  });
  return b;
}

void check_binding(const char* what, size_t index, const Buffer& b, const Var& v) {
  if (!b) throw TypeError(fmt::format("eval_jaxpr: {} {} is an empty Buffer", what, index));
  if (!b.aval().same_type(v.aval()))
    throw TypeError(fmt::format("eval_jaxpr: {} {} has type {} but the jaxpr expects {}", what,
                                index, b.aval().str_short(), v.aval().str_short()));
}

std::vector<Buffer> eval_impl(const Jaxpr& jaxpr, std::span<const Buffer> consts,
                              std::span<const Buffer> args) {
  if (consts.size() != jaxpr.constvars.size())
    throw TypeError(fmt::format("eval_jaxpr: the jaxpr has {} constvars but {} consts were given",
                                jaxpr.constvars.size(), consts.size()));
  if (args.size() != jaxpr.invars.size())
    throw TypeError(fmt::format("eval_jaxpr: the jaxpr takes {} arguments but {} were given",
                                jaxpr.invars.size(), args.size()));
  for (size_t i = 0; i < consts.size(); ++i)
    check_binding("const", i, consts[i], jaxpr.constvars[i]);
  for (size_t i = 0; i < args.size(); ++i) check_binding("argument", i, args[i], jaxpr.invars[i]);

  // Each variable is dropped after the last equation that reads it, so live bytes follow the
  // program's liveness (outputs are kept to the end).
  std::unordered_map<const void*, size_t> last_use = last_reads(jaxpr);

  std::unordered_map<Var, Buffer, VarHash> env;
  auto bind = [&](const Var& v, const Buffer& b) {
    if (!v.is_drop() && last_use.count(v.id())) env[v] = b;
  };
  auto read = [&](const Atom& a) -> Buffer {
    if (a.is_literal()) return materialize(a.literal());
    auto it = env.find(a.var());
    if (it == env.end())
      throw VerifyError(
          fmt::format("eval_jaxpr: a variable of type {} is read before it is defined",
                      a.var().aval().str_short()));
    return it->second;
  };
  for (size_t i = 0; i < consts.size(); ++i) bind(jaxpr.constvars[i], consts[i]);
  for (size_t i = 0; i < args.size(); ++i) bind(jaxpr.invars[i], args[i]);

  std::vector<Buffer> inputs;
  std::vector<ShapedArray> out_avals;
  for (size_t k = 0; k < jaxpr.eqns.size(); ++k) {
    const Eqn& eqn = jaxpr.eqns[k];
    if (!eqn.prim) throw VerifyError("eval_jaxpr: an equation has no primitive");
    inputs.clear();
    out_avals.clear();
    for (const Atom& a : eqn.inputs) inputs.push_back(read(a));
    for (const Var& v : eqn.outputs) out_avals.push_back(v.aval());
    std::vector<Buffer> outs = apply_primitive(*eqn.prim, eqn.params, inputs, out_avals);
    inputs.clear();
    for (const Atom& a : eqn.inputs)
      if (a.is_var() && last_use[a.var().id()] == k) env.erase(a.var());
    for (size_t i = 0; i < outs.size(); ++i) bind(eqn.outputs[i], outs[i]);
  }

  std::vector<Buffer> results;
  results.reserve(jaxpr.outvars.size());
  for (const Atom& a : jaxpr.outvars) results.push_back(read(a));
  return results;
}

// The body's results are the call's outputs, forwarded rather than copied.
void run_call(const Primitive& prim, const Params& params, std::span<const Buffer> in,
              std::span<Buffer> out) {
  const Jaxpr* body = call_body(prim, params);
  if (!body)
    throw TypeError(
        fmt::format("interpreter: {}: param '{}' holds no jaxpr", prim.name, prim.call_body));
  std::vector<Buffer> results = eval_jaxpr(*body, in);
  if (results.size() != out.size())
    throw TypeError(fmt::format("interpreter: {}: the body returns {} values for {} outputs",
                                prim.name, results.size(), out.size()));
  std::move(results.begin(), results.end(), out.begin());
}

}  // namespace

std::vector<Buffer> eval_jaxpr(const Jaxpr& jaxpr, std::span<const Buffer> args) {
  if (jaxpr.consts.size() != jaxpr.constvars.size())
    throw Error(fmt::format(
        "eval_jaxpr: the jaxpr has {} constvars but {} attached consts; pass the consts explicitly",
        jaxpr.constvars.size(), jaxpr.consts.size()));
  std::vector<Buffer> consts;
  consts.reserve(jaxpr.consts.size());
  for (const ConstValue& c : jaxpr.consts) consts.push_back(Buffer::from_const(c));
  return eval_impl(jaxpr, consts, args);
}

std::vector<Buffer> eval_jaxpr(const Jaxpr& jaxpr, std::span<const Buffer> consts,
                               std::span<const Buffer> args) {
  return eval_impl(jaxpr, consts, args);
}

namespace {

// The kernel of `prim` (a call-like primitive's marked as producing its outputs), with its inputs
// checked.
KernelEntry kernel_entry(const Primitive& prim, std::span<const Buffer> inputs) {
  // A call-like primitive (jit, remat2, custom_jvp_call, ...) runs its body, found by its trait.
  std::optional<KernelEntry> entry =
      !prim.call_body.empty() ? KernelEntry{nullptr, true} : find_kernel(prim);
  if (!entry)
    throw UnsupportedError(fmt::format("interpreter: no kernel for primitive '{}'", prim.name));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i])
      throw TypeError(fmt::format("interpreter: {}: operand {} is an empty Buffer", prim.name, i));
  return *entry;
}

void run_kernel(const Primitive& prim, const KernelEntry& entry, const Params& params,
                std::span<const Buffer> inputs, std::span<Buffer> outs);

}  // namespace

void apply_primitive_into(const Primitive& prim, const Params& params,
                          std::span<const Buffer> inputs, std::span<Buffer> outs) {
  const KernelEntry entry = kernel_entry(prim, inputs);
  if (entry.produces_outputs) {
    std::vector<ShapedArray> avals;
    for (const Buffer& b : outs) avals.push_back(b.aval());
    std::vector<Buffer> results = apply_primitive(prim, params, inputs, avals);
    for (size_t i = 0; i < outs.size(); ++i)
      if (results[i].nbytes() > 0) std::memcpy(outs[i].data(), results[i].data(), outs[i].nbytes());
    return;
  }
  std::vector<Buffer> given(outs.begin(), outs.end());
  run_kernel(prim, entry, params, inputs, given);
  // A kernel may still hand back a buffer of its own (the shard_map kernel's gathered outputs).
  for (size_t i = 0; i < outs.size(); ++i)
    if (given[i].data() != outs[i].data() && outs[i].nbytes() > 0)
      std::memcpy(outs[i].data(), given[i].data(), outs[i].nbytes());
}

std::vector<Buffer> apply_primitive(const Primitive& prim, const Params& params,
                                    std::span<const Buffer> inputs,
                                    std::span<const ShapedArray> out_avals) {
  const KernelEntry entry = kernel_entry(prim, inputs);
  std::vector<Buffer> outs(out_avals.size());
  if (!entry.produces_outputs)
    for (size_t i = 0; i < out_avals.size(); ++i) outs[i] = Buffer::allocate(out_avals[i]);
  run_kernel(prim, entry, params, inputs, outs);
  if (entry.produces_outputs)
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i])
        throw Error(fmt::format("interpreter: {}: the kernel left output {} unset", prim.name, i));
      if (!outs[i].aval().same_type(out_avals[i]))
        throw TypeError(fmt::format("interpreter: {}: output {} has type {} but {} was expected",
                                    prim.name, i, outs[i].aval().str_short(),
                                    out_avals[i].str_short()));
    }
  return outs;
}

namespace {

void run_kernel(const Primitive& prim, const KernelEntry& entry, const Params& params,
                std::span<const Buffer> inputs, std::span<Buffer> outs) {
  const bool call = !prim.call_body.empty();
  try {
    CurrentPrimitiveScope scope(prim.name);
    if (call)
      run_call(prim, params, inputs, outs);
    else
      entry.kernel(params, inputs, outs);
  } catch (const Error& e) {
    // A plain Error from a param accessor ("missing param 'axes'") gets the primitive's name;
    // the typed errors of kernels already carry it.
    const std::string_view what = e.what();
    if (typeid(e) != typeid(Error) || what.starts_with("interpreter: ")) throw;
    throw Error(fmt::format("interpreter: {}: {}", prim.name, what));
  }
}

}  // namespace

}  // namespace cjax::runtime
