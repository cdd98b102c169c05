// Batching rules of the shape primitives (JAX: lax._broadcast_in_dim_batch_rule,
// _reshape_batch_rule, _transpose_batch_rule, _squeeze_batch_rule, _concatenate_batch_rule,
// _rev_batch_rule, _pad_batch_rule, _split_batch_rule, slicing._slice_batching_rule). Where JAX
// computes new axes with numpy (np.add), the params hold numpy ints, as JAX prints them.
#include "ir/lax_params.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

BatchedOutputs one(Atom out, BatchDim dim) {
  return {{std::move(out)}, {dim}};
}

Atom bind1(const BatchRuleArgs& a, std::vector<Atom> args, Params params) {
  return a.b.bind(*a.eqn.prim, std::move(args), std::move(params)).at(0);
}

std::vector<ParamValue> items_of(const ParamValue& v) {
  if (v.is<ParamTuple>()) return v.as<ParamTuple>().items;
  if (v.is<ParamList>()) return v.as<ParamList>().items;
  return {};
}

// The tuple param `key` with `item` inserted at `pos` (its other items as they were).
ParamValue inserted(const Params& p, std::string_view key, size_t pos, ParamValue item) {
  std::vector<ParamValue> items = items_of(p.at(key));
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(pos), std::move(item));
  return ParamValue(ParamTuple{std::move(items)});
}

// (0,) + tuple(np.add(1, dims)): a plain 0, then numpy ints.
ParamValue front_then_shifted(const std::vector<int64_t>& dims) {
  ParamTuple t;
  t.items.push_back(ParamValue(int64_t{0}));
  for (int64_t d : dims) t.items.push_back(ParamValue::np_int(d + 1));
  return ParamValue(std::move(t));
}

BatchedOutputs broadcast_in_dim(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  Atom x = moveaxis(a.b, a.args[0], *a.dims[0], 0);
  Shape shape = p.get_ints("shape");
  shape.insert(shape.begin(), x.aval().shape[0]);
  Params q = with_param(p, "shape", ParamValue::ints(shape));
  q.set("broadcast_dimensions", front_then_shifted(p.get_ints("broadcast_dimensions")));
  return one(bind1(a, {x}, std::move(q)), 0);
}

BatchedOutputs reshape(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  Atom x = moveaxis(a.b, a.args[0], *a.dims[0], 0);
  Shape sizes = p.get_ints("new_sizes");
  sizes.insert(sizes.begin(), x.aval().shape[0]);
  const ParamValue* dims = p.find("dimensions");
  std::optional<std::vector<int64_t>> new_dims;
  if (dims && !dims->is_none()) {
    new_dims = std::vector<int64_t>{0};
    for (int64_t d : dims->to_ints()) new_dims->push_back(d + 1);
  }
  return one(lax_ops::reshape(a.b, x, sizes, new_dims), 0);
}

BatchedOutputs transpose(const BatchRuleArgs& a) {
  const int64_t bdim = *a.dims[0];
  std::vector<int64_t> perm{bdim};
  for (int64_t i : a.eqn.params.get_ints("permutation")) perm.push_back(i < bdim ? i : i + 1);
  return one(lax_ops::transpose(a.b, a.args[0], perm), 0);
}

BatchedOutputs squeeze(const BatchRuleArgs& a) {
  Atom x = moveaxis(a.b, a.args[0], *a.dims[0], 0);
  std::vector<int64_t> dims;
  for (int64_t d : a.eqn.params.get_ints("dimensions")) dims.push_back(d + 1);
  return one(lax_ops::squeeze(a.b, x, dims), 0);
}

// Not a JAX primitive (lax.expand_dims is a broadcast_in_dim); older jaxprs hold it.
BatchedOutputs expand_dims(const BatchRuleArgs& a) {
  Atom x = moveaxis(a.b, a.args[0], *a.dims[0], 0);
  std::vector<int64_t> dims;
  for (int64_t d : a.eqn.params.get_ints("dimensions")) dims.push_back(d + 1);
  return one(bind1(a, {x}, with_param(a.eqn.params, "dimensions", ParamValue::ints(dims))), 0);
}

BatchedOutputs concatenate(const BatchRuleArgs& a) {
  const int64_t size = batch_size(a);
  std::vector<Atom> ops;
  for (size_t i = 0; i < a.args.size(); ++i)
    ops.push_back(a.dims[i] ? moveaxis(a.b, a.args[i], *a.dims[i], 0)
                            : lax_ops::broadcast(a.b, a.args[i], Shape{size}));
  return one(lax_ops::concatenate(a.b, ops, a.eqn.params.get_int("dimension") + 1), 0);
}

BatchedOutputs rev(const BatchRuleArgs& a) {
  const int64_t bdim = *a.dims[0];
  std::vector<int64_t> dims;
  for (int64_t d : a.eqn.params.get_ints("dimensions")) dims.push_back(d >= bdim ? d + 1 : d);
  return one(lax_ops::rev(a.b, a.args[0], dims), bdim);
}

BatchedOutputs pad(const BatchRuleArgs& a) {
  JaxprBuilder& b = a.b;
  Atom x = a.args[0];
  const Atom& value = a.args[1];
  BatchDim x_dim = a.dims[0];
  if (!x_dim) {
    x_dim = 0;
    x = lax_ops::broadcast(b, x, Shape{value.aval().shape[size_t(*a.dims[1])]});
  }
  const ParamValue zero_row(
      ParamTuple{{ParamValue(int64_t{0}), ParamValue(int64_t{0}), ParamValue(int64_t{0})}});
  Params p =
      with_param(a.eqn.params, "padding_config",
                 inserted(a.eqn.params, "padding_config", static_cast<size_t>(*x_dim), zero_row));
  if (!a.dims[1]) return one(bind1(a, {x, value}, std::move(p)), x_dim);
  // A batched padding value (batched at 0): pad with zeros, then select the value where the mask
  // of padded positions says so.
  Atom padded = bind1(a, {x, lax_ops::zero_like(b, x)}, p);
  Atom ones = lax_ops::full(b, x.aval().shape, 1.0, DType::bool_);
  Atom mask = bind1(a, {ones, Literal::of(0.0, DType::bool_, false)}, p);
  Atom fill = lax_ops::broadcast_in_dim(b, value, padded.aval().shape, {*x_dim});
  return one(lax_ops::select_n(b, mask, {fill, padded}), x_dim);
}

BatchedOutputs slice(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  const int64_t bdim = *a.dims[0];
  const auto pos = static_cast<size_t>(bdim);
  Params q = with_param(p, "start_indices", inserted(p, "start_indices", pos, int64_t{0}));
  q.set("limit_indices",
        inserted(p, "limit_indices", pos, a.args[0].aval().shape[static_cast<size_t>(bdim)]));
  if (const ParamValue* s = p.find("strides"); s && !s->is_none())
    q.set("strides", inserted(p, "strides", pos, int64_t{1}));
  return one(bind1(a, {a.args[0]}, std::move(q)), bdim);
}

BatchedOutputs split(const BatchRuleArgs& a) {
  const int64_t bdim = *a.dims[0];
  const int64_t axis = a.eqn.params.get_int("axis");
  std::vector<Atom> outs = a.b.bind(
      *a.eqn.prim, {a.args[0]}, with_param(a.eqn.params, "axis", axis >= bdim ? axis + 1 : axis));
  return {outs, std::vector<BatchDim>(outs.size(), bdim)};
}

}  // namespace

void register_structural_batch_rules() {
  define_pass_rules("broadcast_in_dim").batch = broadcast_in_dim;
  define_pass_rules("reshape").batch = reshape;
  define_pass_rules("transpose").batch = transpose;
  define_pass_rules("squeeze").batch = squeeze;
  define_pass_rules("expand_dims").batch = expand_dims;
  define_pass_rules("concatenate").batch = concatenate;
  define_pass_rules("rev").batch = rev;
  define_pass_rules("pad").batch = pad;
  define_pass_rules("slice").batch = slice;
  define_pass_rules("split").batch = split;
}

}  // namespace cjax
