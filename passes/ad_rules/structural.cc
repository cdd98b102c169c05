// Autodiff rules of the shape-changing primitives, all linear (jax/_src/lax/lax.py):
// broadcast_in_dim, reshape, transpose, squeeze, expand_dims, concatenate, pad, and
// convert_element_type.
#include <algorithm>
#include <numeric>

#include "ir/rules/registry.h"
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;

std::vector<int64_t> argsort(const std::vector<int64_t>& xs) {
  std::vector<int64_t> idx(xs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return xs[a] < xs[b]; });
  return idx;
}

bool contains(const std::vector<int64_t>& xs, int64_t x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

// _broadcast_in_dim_transpose_rule: sum over the broadcast dims, then restore the operand's
// size-1 dims.
std::vector<Cotangent> broadcast_in_dim_transpose(const TransposeRuleArgs& a) {
  const ShapedArray& operand = a.args[0].aval();
  std::vector<int64_t> bdims = a.eqn.params.get_ints("broadcast_dimensions");
  size_t out_rank = a.eqn.params.get_ints("shape").size();
  std::vector<int64_t> unit_dims, kept_bdims;
  for (size_t i = 0; i < operand.shape.size(); ++i) {
    if (operand.shape[i] == 1)
      unit_dims.push_back(int64_t(i));
    else
      kept_bdims.push_back(bdims[i]);
  }
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < int64_t(out_rank); ++d)
    if (!contains(kept_bdims, d)) axes.push_back(d);
  Atom summed = reduce_sum(a.b, *a.cts[0], axes);
  return {expand_dims(a.b, summed, unit_dims)};
}

std::vector<Cotangent> reshape_transpose(const TransposeRuleArgs& a) {
  const Shape& shape = a.args[0].aval().shape;
  const ParamValue* dims = a.eqn.params.find("dimensions");
  if (!dims || dims->is_none()) return {reshape(a.b, *a.cts[0], shape)};
  std::vector<int64_t> perm = dims->to_ints();
  Shape sizes;
  for (int64_t d : perm) sizes.push_back(shape[size_t(d)]);
  Atom r = reshape(a.b, *a.cts[0], sizes);
  return {transpose(a.b, r, argsort(perm))};
}

// The transpose of concatenate: the cotangent split back into the operands' pieces, with one
// `split` eqn as JAX does; where the primitive table has no `split`, the slices JAX emitted
// before it had one.
std::vector<Cotangent> concatenate_transpose(const TransposeRuleArgs& a) {
  int64_t dim = a.eqn.params.get_int("dimension");
  const Atom& ct = *a.cts[0];
  const Shape& shape = ct.aval().shape;
  std::vector<Cotangent> cts(a.args.size());
  if (const Primitive* split = find_primitive("split")) {
    std::vector<int64_t> sizes;
    for (const TransposeArg& arg : a.args) sizes.push_back(arg.aval().shape[size_t(dim)]);
    std::vector<Var> parts =
        a.b.emit(*split, {ct}, {{"sizes", ParamValue::ints(sizes)}, {"axis", dim}});
    for (size_t i = 0; i < a.args.size(); ++i)
      if (a.args[i].linear) cts[i] = parts[i];
    return cts;
  }
  int64_t offset = 0;
  for (size_t i = 0; i < a.args.size(); ++i) {
    int64_t size = a.args[i].aval().shape[size_t(dim)];
    if (a.args[i].linear) {
      Shape start(shape.size(), 0), limit = shape;
      start[size_t(dim)] = offset;
      limit[size_t(dim)] = offset + size;
      cts[i] = slice(a.b, ct, start, limit);
    }
    offset += size;
  }
  return cts;
}

std::vector<PadDim> padding_config(const Eqn& eqn) {
  std::vector<PadDim> out;
  const ParamValue& config = eqn.params.at("padding_config");
  const std::vector<ParamValue>* rows = nullptr;
  if (config.is<ParamTuple>()) rows = &config.as<ParamTuple>().items;
  if (config.is<ParamList>()) rows = &config.as<ParamList>().items;
  if (!rows) unsupported("transpose: pad's padding_config is not a tuple of triples", eqn);
  for (const ParamValue& row : *rows) {
    std::vector<int64_t> r = row.to_ints();
    if (r.size() != 3)
      unsupported("transpose: pad's padding_config is not a tuple of triples", eqn);
    out.push_back({r[0], r[1], r[2]});
  }
  return out;
}

// _pad_transpose: the operand's cotangent un-pads (negative low/high padding) and strides over
// the interior padding; the padding value's is what remains of the total.
std::vector<Cotangent> pad_transpose(const TransposeRuleArgs& a) {
  const Atom& t = *a.cts[0];
  std::vector<PadDim> config = padding_config(a.eqn);
  std::vector<Cotangent> cts(2);
  if (!a.args[0].linear && !a.args[1].linear) return cts;
  // JAX computes these with numpy (np.negative, np.zeros_like, np.add): they print as np.int64.
  ParamTuple unpad;
  std::vector<int64_t> strides;
  for (const PadDim& d : config) {
    unpad.items.push_back(
        ParamTuple{{ParamValue::np_int(-d.lo), ParamValue::np_int(-d.hi), ParamValue::np_int(0)}});
    strides.push_back(d.interior + 1);
  }
  const Atom zero = const_like(a.b, t, 0.0);
  Atom unpadded = emit1(a.b, "pad", {t, zero}, {{"padding_config", std::move(unpad)}});
  const Shape& ushape = unpadded.aval().shape;
  Atom t_operand = emit1(a.b, "slice", {unpadded},
                         {{"start_indices", ParamValue::np_ints(Shape(ushape.size(), 0))},
                          {"limit_indices", ParamValue::ints(ushape)},
                          {"strides", ParamValue::np_ints(strides)}});
  if (a.args[0].linear) cts[0] = t_operand;
  if (a.args[1].linear) {
    std::vector<int64_t> all_t(t.aval().shape.size()), all_o(t_operand.aval().shape.size());
    std::iota(all_t.begin(), all_t.end(), 0);
    std::iota(all_o.begin(), all_o.end(), 0);
    Atom total_t = reduce_sum(a.b, t, all_t);
    Atom total_o = reduce_sum(a.b, t_operand, all_o);
    cts[1] = sub(a.b, total_t, total_o);
  }
  return cts;
}

}  // namespace

void register_structural_ad_rules() {
  deflinear("broadcast_in_dim", broadcast_in_dim_transpose);
  deflinear("reshape", reshape_transpose);
  deflinear("transpose", [](const TransposeRuleArgs& a) {
    std::vector<int64_t> perm = a.eqn.params.get_ints("permutation");
    return std::vector<Cotangent>{transpose(a.b, *a.cts[0], argsort(perm))};
  });
  deflinear("squeeze", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{expand_dims(a.b, *a.cts[0], a.eqn.params.get_ints("dimensions"))};
  });
  // expand_dims is cjax's own (JAX spells it broadcast_in_dim): its transpose squeezes.
  deflinear("expand_dims", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{squeeze(a.b, *a.cts[0], a.eqn.params.get_ints("dimensions"))};
  });
  deflinear("concatenate", concatenate_transpose);
  // split and rev: JAX primitives the interpreter knows; their rules are ready for the table.
  deflinear("split", [](const TransposeRuleArgs& a) {
    std::vector<Atom> parts;
    for (size_t i = 0; i < a.cts.size(); ++i)
      parts.push_back(a.cts[i] ? *a.cts[i] : zeros_like_aval(a.b, a.eqn.outputs[i].aval()));
    return std::vector<Cotangent>{concatenate(a.b, parts, a.eqn.params.get_int("axis"))};
  });
  deflinear("rev", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{rev(a.b, *a.cts[0], a.eqn.params.get_ints("dimensions"))};
  });
  deflinear("pad", pad_transpose);

  // Tangents exist only for floating results; the transpose converts back to the operand's type.
  define_pass_rules("convert_element_type").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    DType to = a.eqn.params.get_dtype("new_dtype");
    if (!has_tangent_space(to)) return {std::nullopt};
    bool weak = a.eqn.params.get_bool("weak_type");
    return {convert_element_type(a.b, *a.tangents[0], to, weak)};
  };
  define_pass_rules("convert_element_type").transpose = [](const TransposeRuleArgs& a) {
    const ShapedArray& operand = a.args[0].aval();
    if (!has_tangent_space(operand.dtype)) return std::vector<Cotangent>(1);
    return std::vector<Cotangent>{
        convert_element_type(a.b, *a.cts[0], operand.dtype, operand.weak_type)};
  };
}

}  // namespace cjax
