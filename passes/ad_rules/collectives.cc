// Autodiff rules of the collectives (jax/_src/lax/parallel.py): psum, all_gather and
// reduce_scatter are linear. psum's transpose broadcasts the cotangent back over the positional
// axes and psums it over the named ones (psum is psum + broadcast to every member); all_gather
// and reduce_scatter transpose to each other; ppermute transposes to the inverse permutation and
// all_to_all to the all_to_all that swaps its split and concat axes. pmax and pmin have no rule (no
// derivative, as in JAX: the jvp pass says so, naming them); axis_index has no operands.
#include <algorithm>

#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace lax_ops;

std::vector<Cotangent> psum_transpose(const TransposeRuleArgs& a) {
  std::vector<int64_t> positional;
  ParamTuple named;
  for (const ParamValue& axis : a.eqn.params.at("axes").as<ParamTuple>().items)
    if (axis.is<int64_t>())
      positional.push_back(axis.as<int64_t>());
    else
      named.items.push_back(axis);
  std::vector<Cotangent> cts(a.args.size());
  std::vector<Atom> nonzero;
  std::vector<size_t> where;
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (!a.args[i].linear || !a.cts[i]) continue;
    Atom ct = *a.cts[i];
    if (!positional.empty()) {
      const Shape& in_shape = a.args[i].aval().shape;
      std::vector<int64_t> kept;
      for (int64_t d = 0; d < int64_t(in_shape.size()); ++d)
        if (std::find(positional.begin(), positional.end(), d) == positional.end())
          kept.push_back(d);
      ct = broadcast_in_dim(a.b, ct, in_shape, kept);
    }
    nonzero.push_back(ct);
    where.push_back(i);
  }
  if (nonzero.empty()) return cts;
  std::vector<Atom> summed = all_reduce(a.b, "psum", nonzero, named);
  for (size_t k = 0; k < where.size(); ++k) cts[where[k]] = summed[k];
  return cts;
}

std::vector<Cotangent> all_gather_transpose(const TransposeRuleArgs& a) {
  const Params& p = a.eqn.params;
  return {psum_scatter(a.b, *a.cts[0], p.at("axis_name"), p.get_int("axis_size"),
                       p.get_int("all_gather_dimension"), p.get_bool("tiled"))};
}

std::vector<Cotangent> reduce_scatter_transpose(const TransposeRuleArgs& a) {
  const Params& p = a.eqn.params;
  return {all_gather(a.b, *a.cts[0], p.at("axis_name"), p.get_int("axis_size"),
                     p.get_int("scatter_dimension"), p.get_bool("tiled"))};
}

std::vector<Cotangent> ppermute_transpose(const TransposeRuleArgs& a) {
  const Params& p = a.eqn.params;
  std::vector<std::pair<int64_t, int64_t>> inverse;
  for (const auto& [src, dst] : perm_of(p.at("perm"))) inverse.emplace_back(dst, src);
  return {ppermute(a.b, *a.cts[0], p.at("axis_name"), perm_param(inverse))};
}

std::vector<Cotangent> all_to_all_transpose(const TransposeRuleArgs& a) {
  const Params& p = a.eqn.params;
  return {all_to_all(a.b, *a.cts[0], p.at("axis_name"), p.get_int("concat_axis"),
                     p.get_int("split_axis"), p.get_bool("tiled"))};
}

}  // namespace

void register_collective_ad_rules() {
  ad::deflinear("psum", psum_transpose);
  ad::deflinear("all_gather", all_gather_transpose);
  ad::deflinear("reduce_scatter", reduce_scatter_transpose);
  ad::deflinear("ppermute", ppermute_transpose);
  ad::deflinear("all_to_all", all_to_all_transpose);
}

}  // namespace cjax
