// Batching rules of the elementwise primitives (JAX: batching.defvectorized, defbroadcasting,
// lax._select_batch_rule, lax._clamp_batch_rule, batching.add_batched).
#include <algorithm>

#include "ir/rules/registry.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

BatchedOutputs bind_same(const BatchRuleArgs& a, std::vector<Atom> args, BatchDim dim) {
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, std::move(args), a.eqn.params);
  return {outs, std::vector<BatchDim>(outs.size(), dim)};
}

BatchDim first_dim(std::span<const BatchDim> dims) {
  for (BatchDim d : dims)
    if (d) return d;
  return std::nullopt;
}

// One operand (or operands batched alike): the primitive applies as it is.
BatchedOutputs vectorized(const BatchRuleArgs& a) {
  return bind_same(a, {a.args.begin(), a.args.end()}, first_dim(a.dims));
}

// Operands each keep their own batch axis (optimization_barrier, device_put).
BatchedOutputs per_operand(const BatchRuleArgs& a) {
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args.begin(), a.args.end()}, a.eqn.params);
  return {outs, {a.dims.begin(), a.dims.end()}};
}

// JAX's _handle_scalar_broadcasting: a batched operand of lower rank gets trailing size-1 axes.
Atom scalar_broadcasting(JaxprBuilder& b, int64_t rank, const Atom& x, BatchDim d) {
  const int64_t r = x.aval().rank();
  if (!d || rank == r) return x;
  std::vector<int64_t> dims;
  for (int64_t i = r; i < rank; ++i) dims.push_back(i);
  return lax_ops::expand_dims(b, x, dims);
}

// JAX's broadcast_batcher: operands batched alike (and scalars) apply as they are; otherwise every
// non-scalar operand gets its batch axis in front (size 1 for unbatched ones, which the
// primitive's size-1 broadcasting stretches).
BatchedOutputs broadcasting(const BatchRuleArgs& a) {
  if (a.args.size() == 1) return vectorized(a);
  size_t first = 0;
  while (!a.dims[first]) ++first;
  const Shape& shape = a.args[first].aval().shape;
  const BatchDim dim = a.dims[first];
  bool agree = true;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i].aval().rank() > 0) agree &= a.args[i].aval().shape == shape && a.dims[i] == dim;
  if (agree) return bind_same(a, {a.args.begin(), a.args.end()}, dim);
  std::vector<Atom> args;
  int64_t rank = 0;
  for (size_t i = 0; i < a.args.size(); ++i) {
    const Atom& x = a.args[i];
    args.push_back(x.aval().rank() > 0 ? bdim_at_front(a.b, x, a.dims[i], 1) : x);
    rank = std::max(rank, args.back().aval().rank());
  }
  for (size_t i = 0; i < args.size(); ++i)
    args[i] = scalar_broadcasting(a.b, rank, args[i], a.dims[i]);
  return bind_same(a, std::move(args), 0);
}

// add_any (JAX's add_jaxvals): the unbatched operand is broadcast to the other's batch axis, or
// the first moved to the second's.
BatchedOutputs add_any(const BatchRuleArgs& a) {
  Atom x = a.args[0], y = a.args[1];
  BatchDim bx = a.dims[0], by = a.dims[1];
  if (bx == by) return bind_same(a, {x, y}, bx);
  if (!bx) {
    x = broadcast(a.b, x, y.aval().shape[size_t(*by)], *by);
    return bind_same(a, {x, y}, by);
  }
  if (!by) {
    y = broadcast(a.b, y, x.aval().shape[size_t(*bx)], *bx);
    return bind_same(a, {x, y}, bx);
  }
  x = moveaxis(a.b, x, *bx, *by);
  return bind_same(a, {x, y}, by);
}

// JAX's _select_batch_rule.
BatchedOutputs select_n(const BatchRuleArgs& a) {
  JaxprBuilder& b = a.b;
  Atom which = a.args[0];
  const BatchDim which_dim = a.dims[0];
  std::vector<Atom> cases(a.args.begin() + 1, a.args.end());
  std::vector<BatchDim> case_dims(a.dims.begin() + 1, a.dims.end());
  const int64_t size = batch_size(a);
  auto emit = [&](std::vector<Atom> ops, BatchDim d) {
    ops.insert(ops.begin(), which);
    return bind_same(a, std::move(ops), d);
  };
  const auto shape_of = [](const Atom& x) -> const Shape& { return x.aval().shape; };
  if (std::all_of(case_dims.begin(), case_dims.end(), [&](BatchDim d) { return d == which_dim; })) {
    if (shape_of(which) != shape_of(cases[0]))  // a scalar predicate, batched
      which = lax_ops::broadcast_in_dim(b, which, shape_of(cases[0]), {*which_dim});
    return emit(cases, which_dim);
  }
  if (which.aval().rank() == 0 &&
      std::all_of(case_dims.begin(), case_dims.end(), [](BatchDim d) { return d.has_value(); })) {
    if (std::all_of(case_dims.begin(), case_dims.end(),
                    [&](BatchDim d) { return d == case_dims[0]; }))
      return emit(cases, case_dims[0]);
    if (std::all_of(cases.begin(), cases.end(),
                    [&](const Atom& c) { return shape_of(c) == shape_of(cases[0]); })) {
      for (size_t i = 1; i < cases.size(); ++i)
        cases[i] = moveaxis(b, cases[i], *case_dims[i], *case_dims[0]);
      return emit(cases, case_dims[0]);
    }
  }
  if (which.aval().rank() > 0) which = bdim_at_front(b, which, which_dim, size);
  if (!std::all_of(cases.begin(), cases.end(), [](const Atom& c) { return c.aval().rank() == 0; }))
    for (size_t i = 0; i < cases.size(); ++i)
      cases[i] = bdim_at_front(b, cases[i], case_dims[i], size);
  const int64_t case_rank = cases[0].aval().rank();
  if (which.aval().rank() > 0 && which.aval().rank() < case_rank)
    which = lax_ops::broadcast_in_dim(b, which, shape_of(cases[0]), {0});
  if (which.aval().rank() > case_rank)
    for (Atom& c : cases) c = lax_ops::broadcast_in_dim(b, c, shape_of(which), {});
  return emit(cases, 0);
}

// JAX's _clamp_batch_rule.
BatchedOutputs clamp(const BatchRuleArgs& a) {
  JaxprBuilder& b = a.b;
  Atom lo = a.args[0], x = a.args[1], hi = a.args[2];
  const BatchDim lo_d = a.dims[0], x_d = a.dims[1], hi_d = a.dims[2];
  const int64_t size = batch_size(a);
  auto rank = [](const Atom& v) { return v.aval().rank(); };
  auto emit = [&](BatchDim d) { return bind_same(a, {lo, x, hi}, d); };
  if (lo_d == x_d && x_d == hi_d) {
    if (lo.aval().shape == x.aval().shape && x.aval().shape == hi.aval().shape) return emit(x_d);
    if (rank(lo) == 0 && rank(hi) == 0) return emit(x_d);
    if (rank(lo) == 1 && rank(hi) == 1) {
      lo = lax_ops::broadcast_in_dim(b, lo, x.aval().shape, {*lo_d});
      hi = lax_ops::broadcast_in_dim(b, hi, x.aval().shape, {*hi_d});
      return emit(x_d);
    }
  } else if (rank(lo) == 0 && rank(hi) == 0 && x_d) {
    return emit(x_d);
  }
  if (rank(lo) > 0) lo = bdim_at_front(b, lo, lo_d, size);
  if (rank(hi) > 0) hi = bdim_at_front(b, hi, hi_d, size);
  if (rank(x) > 0) x = bdim_at_front(b, x, x_d, size);
  if (rank(lo) == 0 && rank(x) > 0) lo = lax_ops::broadcast(b, lo, x.aval().shape);
  if (rank(hi) == 0 && rank(x) > 0) hi = lax_ops::broadcast(b, hi, x.aval().shape);
  if (rank(lo) > 0 && rank(lo) < rank(x))
    lo = lax_ops::broadcast_in_dim(b, lo, x.aval().shape, {0});
  if (rank(hi) > 0 && rank(hi) < rank(x))
    hi = lax_ops::broadcast_in_dim(b, hi, x.aval().shape, {0});
  if (rank(lo) > rank(x)) x = lax_ops::broadcast(b, x, lo.aval().shape);
  return emit(0);
}

}  // namespace

void register_elementwise_batch_rules() {
  for (std::string_view name : builtin_primitive_names()) {
    const Primitive& p = get_primitive(name);
    if (p.elementwise) define_pass_rules(name).batch = broadcasting;
  }
  for (const char* name : {"copy", "reduce_precision", "bitcast_convert_type", "name",
                           "stop_gradient", "convert_element_type", "integer_pow"})
    define_pass_rules(name).batch = vectorized;
  for (const char* name : {"optimization_barrier", "device_put"})
    define_pass_rules(name).batch = per_operand;
  define_pass_rules("add_any").batch = add_any;
  define_pass_rules("select_n").batch = select_n;
  define_pass_rules("clamp").batch = clamp;
}

}  // namespace cjax
