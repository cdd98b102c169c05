// Batching rules of the reductions (JAX: batching.defreducer for reduce_* and arg*, loops.
// _cumred_batch_rule, lax._sort_batch_rule).
#include <algorithm>

#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

// JAX's reducer_batcher: the reduced axes skip the batch axis (np.where: numpy ints), whose place
// among the kept axes is the result's batch axis.
BatchedOutputs reducer(const BatchRuleArgs& a) {
  const int64_t bdim = *a.dims[0];
  std::vector<int64_t> axes;
  for (int64_t ax : a.eqn.params.get_ints("axes")) axes.push_back(ax < bdim ? ax : ax + 1);
  int64_t out_dim = 0;
  for (int64_t i = 0; i < bdim; ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) ++out_dim;
  Params p = with_param(a.eqn.params, "axes", ParamValue::np_ints(axes));
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args[0]}, std::move(p));
  return {outs, {out_dim}};
}

BatchedOutputs cumulative(const BatchRuleArgs& a) {
  const int64_t bdim = *a.dims[0];
  const int64_t axis = a.eqn.params.get_int("axis");
  std::vector<Atom> outs = a.b.bind(
      *a.eqn.prim, {a.args[0]}, with_param(a.eqn.params, "axis", axis < bdim ? axis : axis + 1));
  return {outs, {bdim}};
}

// Every operand gets the first batched operand's batch axis (unbatched ones broadcast to it).
BatchedOutputs sort(const BatchRuleArgs& a) {
  size_t first = 0;
  while (!a.dims[first]) ++first;
  const Atom& proto = a.args[first];
  const int64_t bdim = *a.dims[first];
  std::vector<Atom> args;
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (a.dims[i]) {
      args.push_back(moveaxis(a.b, a.args[i], *a.dims[i], bdim));
      continue;
    }
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < proto.aval().rank(); ++d)
      if (d != bdim) kept.push_back(d);
    args.push_back(lax_ops::broadcast_in_dim(a.b, a.args[i], proto.aval().shape, kept));
  }
  const int64_t dimension = a.eqn.params.get_int("dimension");
  std::vector<Atom> outs =
      a.b.bind(*a.eqn.prim, std::move(args),
               with_param(a.eqn.params, "dimension", dimension + (bdim <= dimension ? 1 : 0)));
  return {outs, std::vector<BatchDim>(outs.size(), bdim)};
}

// top_k: the batch axis first, the axis one further.
BatchedOutputs top_k(const BatchRuleArgs& a) {
  const Atom x = moveaxis(a.b, a.args[0], *a.dims[0], 0);
  const int64_t axis = a.eqn.params.get_int("axis");
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {x}, with_param(a.eqn.params, "axis", axis + 1));
  return {outs, {0, 0}};
}

}  // namespace

void register_reduction_batch_rules() {
  define_pass_rules("top_k").batch = top_k;
  for (const char* name : {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                           "reduce_or", "reduce_xor", "argmax", "argmin"})
    define_pass_rules(name).batch = reducer;
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"})
    define_pass_rules(name).batch = cumulative;
  define_pass_rules("sort").batch = sort;
}

}  // namespace cjax
