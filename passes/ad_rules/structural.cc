// Autodiff rules of the structural primitives (all linear): broadcast_in_dim, reshape,
// transpose, reduce_sum, convert_element_type, squeeze.
#include <algorithm>
#include <numeric>

#include "ir/lax_params.h"
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"

namespace cjax {

namespace {

std::vector<int64_t> argsort(const std::vector<int64_t>& xs) {
  std::vector<int64_t> idx(xs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return xs[a] < xs[b]; });
  return idx;
}

// lax.expand_dims: broadcast_in_dim inserting size-1 dims at `dims` (none: unchanged).
Atom expand_dims(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& dims) {
  if (dims.empty()) return x;
  Shape shape = x.aval().shape;
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d : sorted) shape.insert(shape.begin() + d, 1);
  std::vector<int64_t> bdims;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (!std::binary_search(sorted.begin(), sorted.end(), i)) bdims.push_back(i);
  return lax::broadcast_in_dim(b, x, shape, bdims);
}

}  // namespace

void register_structural_ad_rules() {
  ad::deflinear("broadcast_in_dim", [](const TransposeRuleArgs& a) {
    const ShapedArray& operand = a.args[0].aval();
    const Params& p = a.eqn.params;
    std::vector<int64_t> bdims = p.get_ints("broadcast_dimensions");
    size_t out_rank = p.get_ints("shape").size();
    std::vector<int64_t> unit_dims, kept_bdims;
    for (size_t i = 0; i < operand.shape.size(); ++i) {
      if (operand.shape[i] == 1)
        unit_dims.push_back(int64_t(i));
      else
        kept_bdims.push_back(bdims[i]);
    }
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < int64_t(out_rank); ++d)
      if (std::find(kept_bdims.begin(), kept_bdims.end(), d) == kept_bdims.end()) axes.push_back(d);
    Atom summed = lax::reduce_sum(a.b, *a.cts[0], axes);
    return std::vector<Cotangent>{expand_dims(a.b, summed, unit_dims)};
  });

  ad::deflinear("reduce_sum", [](const TransposeRuleArgs& a) {
    const Shape& in_shape = a.args[0].aval().shape;
    std::vector<int64_t> axes = a.eqn.params.get_ints("axes");
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < int64_t(in_shape.size()); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
    return std::vector<Cotangent>{lax::broadcast_in_dim(a.b, *a.cts[0], in_shape, kept)};
  });

  ad::deflinear("reshape", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{lax::reshape(a.b, *a.cts[0], a.args[0].aval().shape)};
  });

  ad::deflinear("transpose", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{
        lax::transpose(a.b, *a.cts[0], argsort(a.eqn.params.get_ints("permutation")))};
  });

  ad::deflinear("squeeze", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{expand_dims(a.b, *a.cts[0], a.eqn.params.get_ints("dimensions"))};
  });

  // convert_element_type: tangents exist only for floating results; the transpose converts back.
  register_jvp_rule("convert_element_type", [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    DType to = a.eqn.params.get_dtype("new_dtype");
    if (!has_tangent_space(to) || !has_tangent_space(a.primals[0].aval().dtype)) return {std::nullopt};
    return {a.b.emit1("convert_element_type", {*a.tangents[0]}, a.eqn.params)};
  });
  register_transpose_rule("convert_element_type", [](const TransposeRuleArgs& a) {
    const ShapedArray& operand = a.args[0].aval();
    return std::vector<Cotangent>{
        lax::convert_element_type(a.b, *a.cts[0], operand.dtype, operand.weak_type)};
  });
}

}  // namespace cjax
