// The batching rules of gather and the scatters (jax/_src/lax/slicing.py:
// _gather_batching_rule, _scatter_batching_rule): the batch axis goes first, and becomes an
// offset dim (operand batched), a batch dim of the indices (indices batched), or a batching dim
// of both (XLA's operand_batching_dims). JAX shifts the dims with np.add, so the shifted ones
// print as numpy ints (GatherDimensionNumbers::numpy_from).
#include "ir/gather_params.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/lax/gather.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

std::vector<int64_t> plus_one(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

std::vector<int64_t> zero_then(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out{0};
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

BatchedOutputs gather(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  GatherDimensionNumbers dn = GatherDimensionNumbers::from_param(p.at("dimension_numbers"));
  Shape sizes = p.get_ints("slice_sizes");
  const int64_t n = batch_size(a);
  Atom operand = a.args[0], indices = a.args[1];
  Params out = p;
  if (a.dims[0] && !a.dims[1]) {
    operand = moveaxis(a.b, operand, *a.dims[0], 0);
    sizes.insert(sizes.begin(), n);
    dn = {zero_then(dn.offset_dims),      plus_one(dn.collapsed_slice_dims),
          plus_one(dn.start_index_map),   plus_one(dn.operand_batching_dims),
          dn.start_indices_batching_dims, {1, 0, 0, 0, dn.numpy_from[4]}};
  } else if (!a.dims[0] && a.dims[1]) {
    indices = moveaxis(a.b, indices, *a.dims[1], 0);
    dn.offset_dims = plus_one(dn.offset_dims);
    dn.start_indices_batching_dims = plus_one(dn.start_indices_batching_dims);
    dn.numpy_from[0] = dn.numpy_from[4] = 0;
    out.set("unique_indices", false);
    out.set("indices_are_sorted", false);
  } else {
    operand = moveaxis(a.b, operand, *a.dims[0], 0);
    indices = moveaxis(a.b, indices, *a.dims[1], 0);
    sizes.insert(sizes.begin(), n == 0 ? 0 : 1);
    dn = {plus_one(dn.offset_dims),
          plus_one(dn.collapsed_slice_dims),
          plus_one(dn.start_index_map),
          zero_then(dn.operand_batching_dims),
          zero_then(dn.start_indices_batching_dims),
          {0, 0, 0, 1, 1}};
  }
  out.set("dimension_numbers", dn.to_param());
  out.set("slice_sizes", ParamValue::ints(sizes));
  Atom result = lax_ops::emit1(a.b, "gather", {operand, indices}, std::move(out));
  return {{result}, {0}};
}

BatchedOutputs scatter(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  ScatterDimensionNumbers dn = ScatterDimensionNumbers::from_param(p.at("dimension_numbers"));
  const int64_t n = batch_size(a);
  const Atom operand = bdim_at_front(a.b, a.args[0], a.dims[0], n);
  const Atom updates = bdim_at_front(a.b, a.args[2], a.dims[2], n);
  Atom indices = a.args[1];
  if (!a.dims[1]) {
    dn = {zero_then(dn.update_window_dims),          plus_one(dn.inserted_window_dims),
          plus_one(dn.scatter_dims_to_operand_dims), plus_one(dn.operand_batching_dims),
          dn.scatter_indices_batching_dims,          {1, 0, 0, 0, dn.numpy_from[4]}};
  } else {
    indices = moveaxis(a.b, indices, *a.dims[1], 0);
    dn = {plus_one(dn.update_window_dims),
          plus_one(dn.inserted_window_dims),
          plus_one(dn.scatter_dims_to_operand_dims),
          zero_then(dn.operand_batching_dims),
          zero_then(dn.scatter_indices_batching_dims),
          {0, 0, 0, 1, 1}};
  }
  Atom result = lax_ops::emit1(a.b, a.eqn.prim->name, {operand, indices, updates},
                               with_param(p, "dimension_numbers", dn.to_param()));
  return {{result}, {0}};
}

}  // namespace

void register_gather_scatter_batch_rules() {
  define_pass_rules("gather").batch = gather;
  for (const char* name : {"scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"})
    define_pass_rules(name).batch = scatter;
}

}  // namespace cjax
