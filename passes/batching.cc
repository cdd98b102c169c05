#include "passes/batching.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "ir/sub_jaxprs.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"
#include "passes/rules.h"

namespace cjax {
namespace batching {

Atom moveaxis(JaxprBuilder& b, const Atom& x, int64_t src, int64_t dst) {
  if (src == dst) return x;
  const int64_t rank = x.aval().rank();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  return lax_ops::transpose(b, x, perm);
}

Atom broadcast(JaxprBuilder& b, const Atom& x, int64_t size, int64_t axis) {
  Shape shape = x.aval().shape;
  shape.insert(shape.begin() + axis, size);
  // np.delete(np.arange(rank), axis): numpy ints.
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (i != axis) dims.push_back(i);
  Params p = lax_params::broadcast_in_dim(shape, dims);
  p.set("broadcast_dimensions", ParamValue::np_ints(dims));
  return b.bind(get_primitive("broadcast_in_dim"), {x}, std::move(p)).at(0);
}

Atom bdim_at_front(JaxprBuilder& b, const Atom& x, BatchDim dim, int64_t size) {
  return dim ? moveaxis(b, x, *dim, 0) : broadcast(b, x, size, 0);
}

Atom matchaxis(JaxprBuilder& b, const Atom& x, BatchDim src, BatchDim dst, int64_t size,
               const std::string& what) {
  if (dst && *dst < 0) *dst += x.aval().rank() + (src ? 0 : 1);
  if (src == dst) return x;
  if (src && dst) return moveaxis(b, x, *src, *dst);
  if (dst) return broadcast(b, x, size, *dst);
  throw UsageError(fmt::format(
      "vmap has mapped output but out_axes is None: {} is batched (along axis {} of {})", what,
      *src, x.aval().str_short()));
}

int64_t batch_size(const BatchRuleArgs& a) {
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.dims[i]) return a.args[i].aval().shape.at(static_cast<size_t>(*a.dims[i]));
  return a.axis.size;
}

Params with_param(const Params& p, const std::string& key, ParamValue value) {
  Params out = p;
  out.set(key, std::move(value));
  return out;
}

}  // namespace batching

namespace {

// Whether `eqn`, or an eqn of a jaxpr it holds, is a collective over the axis `name`.
bool names_axis(const Eqn& eqn, const std::string& name) {
  if (name.empty()) return false;
  if (const auto& axis_names = pass_rules(*eqn.prim).batch_axis_names) {
    const std::vector<std::string> names = axis_names(eqn.params);
    if (std::find(names.begin(), names.end(), name) != names.end()) return true;
  }
  for (const Jaxpr* body : sub_jaxprs(eqn))
    for (const Eqn& e : body->eqns)
      if (names_axis(e, name)) return true;
  return false;
}

ShapedArray with_batch_axis(const ShapedArray& a, int64_t dim, int64_t size) {
  Shape shape = a.shape;
  shape.insert(shape.begin() + dim, size);
  return ShapedArray(a.dtype, std::move(shape), a.weak_type);
}

}  // namespace

BatchedJaxpr batch_jaxpr(const Jaxpr& jaxpr, std::span<const BatchDim> in_dims,
                         const BatchAxis& axis, std::optional<std::vector<BatchDim>> out_dims) {
  ensure_pass_rules();
  if (in_dims.size() != jaxpr.invars.size())
    throw Error(fmt::format("vmap: {} batch dimensions for {} inputs", in_dims.size(),
                            jaxpr.invars.size()));
  struct Value {
    Atom atom;
    BatchDim dim;
  };
  std::unordered_map<Var, Value, VarHash> env;
  auto read = [&](const Atom& a) -> Value {
    if (a.is_literal()) return {a, std::nullopt};
    auto it = env.find(a.var());
    return it == env.end() ? Value{a, std::nullopt} : it->second;  // constvars
  };

  std::vector<Var> invars;
  for (size_t i = 0; i < jaxpr.invars.size(); ++i) {
    const ShapedArray& aval = jaxpr.invars[i].aval();
    BatchDim d = in_dims[i];
    if (d && (*d < 0 || *d > aval.rank()))
      throw Error(fmt::format("vmap: batch axis {} of input {} is out of range for {}", *d, i,
                              aval.str_short()));
    Var v(d ? with_batch_axis(aval, *d, axis.size) : aval);
    invars.push_back(v);
    env.emplace(jaxpr.invars[i], Value{v, d});
  }

  JaxprBuilder b;
  for (const Eqn& eqn : jaxpr.eqns) {
    b.set_source(eqn.source);
    std::vector<Atom> args;
    std::vector<BatchDim> dims;
    bool any = false;
    for (const Atom& in : eqn.inputs) {
      Value v = read(in);
      args.push_back(v.atom);
      dims.push_back(v.dim);
      any |= v.dim.has_value();
    }
    if (!any && !names_axis(eqn, axis.name)) {  // unbatched: the eqn as it is, on its inputs
      Eqn copy = eqn;
      copy.inputs = std::move(args);
      b.append(std::move(copy));
      continue;
    }
    const BatchRule& rule = pass_rules(*eqn.prim).batch;
    if (!rule)
      throw UnsupportedError(fmt::format("vmap: no batching rule for '{}' (batch_jaxpr), from {}",
                                         eqn.prim->name, eqn.source.summarize()));
    BatchedOutputs r = rule(BatchRuleArgs{b, eqn, args, dims, axis});
    if (r.outs.size() != eqn.outputs.size() || r.dims.size() != eqn.outputs.size())
      throw Error(fmt::format("vmap: the batching rule of '{}' returned {} outputs for {}",
                              eqn.prim->name, r.outs.size(), eqn.outputs.size()));
    for (size_t i = 0; i < eqn.outputs.size(); ++i)
      env.insert_or_assign(eqn.outputs[i], Value{r.outs[i], r.dims[i]});
  }
  b.set_source({});

  BatchedJaxpr out;
  std::vector<Atom> outvars;
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    Value v = read(jaxpr.outvars[i]);
    if (out_dims) {
      BatchDim want = out_dims->size() == 1 ? out_dims->front() : out_dims->at(i);
      if (want && *want == batching::kZeroIfMapped) want = v.dim ? BatchDim(0) : std::nullopt;
      v.atom = batching::matchaxis(b, v.atom, v.dim, want, axis.size, fmt::format("output {}", i));
      v.dim = want && *want < 0 ? BatchDim(*want + v.atom.aval().rank()) : want;
    }
    outvars.push_back(v.atom);
    out.out_dims.push_back(v.dim);
  }
  out.jaxpr = b.build(std::move(invars), std::move(outvars), jaxpr.constvars, jaxpr.consts);
  out.jaxpr.debug = jaxpr.debug;
  return out;
}

}  // namespace cjax
