// Autodiff rules of the reductions (jax/_src/lax/lax.py): reduce_sum (linear), reduce_max and
// reduce_min (_reduce_chooser_jvp_rule), reduce_prod (_reduce_jvp: a pairwise product tree,
// differentiated; it replaces the primal eqn, as in JAX), and sort.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;

bool contains(const std::vector<int64_t>& xs, int64_t x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

std::vector<int64_t> kept_dims(size_t rank, const std::vector<int64_t>& axes) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < int64_t(rank); ++d)
    if (!contains(axes, d)) out.push_back(d);
  return out;
}

// _reduce_chooser_jvp_rule: the mean of the tangents at the positions that attain the max/min.
Atom chooser_jvp(JaxprBuilder& b, const Atom& g, const Atom& ans, std::span<const Atom> p,
                 const Eqn& eqn) {
  const Atom& operand = p[0];
  std::vector<int64_t> axes = eqn.params.get_ints("axes");
  Shape shape = operand.aval().shape;
  for (int64_t a : axes) shape[size_t(a)] = 1;
  Atom ans_r = reshape(b, ans, shape);
  Atom hit = eq(b, operand, ans_r);
  Atom location_indicators = convert_element_type(b, hit, g.aval().dtype);
  Atom counts = reduce_sum(b, location_indicators, axes);
  Atom gl = mul(b, g, location_indicators);
  Atom total = reduce_sum(b, gl, axes);
  return div(b, total, counts);
}

// _reduce_jvp with the mul reducer: the reduced axes moved to the front and flattened, then
// halved repeatedly (padding odd halves with the identity 1) under jvp.
JvpFullResult reduce_prod_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                              std::span<const Tangent> tangents) {
  const Atom& x = primals[0];
  const Shape& in_shape = x.aval().shape;
  std::vector<int64_t> axes = eqn.params.get_ints("axes");
  std::vector<int64_t> non_axes = kept_dims(in_shape.size(), axes);
  int64_t n = 1;
  for (int64_t a : axes) n *= in_shape[size_t(a)];
  std::vector<int64_t> permutation = axes;
  permutation.insert(permutation.end(), non_axes.begin(), non_axes.end());
  Shape new_shape{n};
  Shape out_shape;
  for (int64_t d : non_axes) {
    new_shape.push_back(in_shape[size_t(d)]);
    out_shape.push_back(in_shape[size_t(d)]);
  }
  Atom xp = reshape(b, x, new_shape, permutation);
  Tangent xt;
  if (tangents[0]) xt = reshape(b, *tangents[0], new_shape, permutation);
  Dual xs{xp, xt};
  Atom init = const_like(b, x, 1.0);
  while (xs.primal.aval().shape[0] > 1) {
    int64_t m = xs.primal.aval().shape[0];
    int64_t n1 = (m + 1) / 2, n2 = m - n1;
    size_t rank = xs.primal.aval().shape.size();
    Shape lim1 = xs.primal.aval().shape, lim2 = xs.primal.aval().shape;
    lim1[0] = n1;
    std::vector<int64_t> ones(rank, 1);
    Shape zeros(rank, 0), start2(rank, 0);
    start2[0] = n1;
    Dual xs1 = jvp_bind1(b, "slice", {xs}, lax_params::slice(zeros, lim1, ones));
    Dual xs2 = jvp_bind1(b, "slice", {xs}, lax_params::slice(start2, lim2, ones));
    if (n2 != n1) {
      std::vector<std::vector<int64_t>> paddings(rank, std::vector<int64_t>{0, 0, 0});
      paddings[0] = {0, 1, 0};
      xs2 = jvp_bind1(b, "pad", {xs2, Dual{init, std::nullopt}}, lax_params::pad(paddings));
    }
    xs = jvp_bind1(b, "mul", {xs1, xs2}, {{"out_dtype", NoneParam{}}});
  }
  if (xs.primal.aval().shape[0] == 0) {
    Atom out = full(b, out_shape, 1.0, x.aval().dtype);
    return {{out}, {zeros_like_aval(b, out.aval())}};
  }
  Dual out = jvp_bind1(b, "squeeze", {xs}, lax_params::squeeze({0}));
  if (!out.tangent) out.tangent = zeros_like_aval(b, out.primal.aval());
  return {{out.primal}, {out.tangent}};
}

// sort with `num_keys` keys, returning its last output: `x` permuted as the keys are sorted.
Atom sorted_along(JaxprBuilder& b, const Eqn& eqn, std::vector<Atom> keys, const Atom& x) {
  Params params = eqn.params;
  params.set("num_keys", static_cast<int64_t>(keys.size()));
  keys.push_back(x);
  return b.emit(*eqn.prim, std::move(keys), std::move(params)).back();
}

// A tangent of sort is its operand's tangent permuted like the operand: sorted along with the
// keys, which is linear in the tangent. JAX's rule gathers by the permutation instead; this one
// needs no gather (cjax has none yet) and transposes to another sort.
std::vector<Tangent> sort_jvp(const JvpRuleArgs& a) {
  const auto num_keys = static_cast<size_t>(a.eqn.params.get_int("num_keys"));
  std::vector<Atom> keys(a.primals.begin(), a.primals.begin() + static_cast<long>(num_keys));
  std::vector<Tangent> out(a.tangents.size());
  for (size_t i = 0; i < a.tangents.size(); ++i)
    if (a.tangents[i]) out[i] = sorted_along(a.b, a.eqn, keys, *a.tangents[i]);
  return out;
}

// The transpose of "permute t as the keys sort" sends each cotangent back to where its element
// came from: the permutation is the iota sorted along with the keys, and sorting the cotangent by
// it undoes the permutation.
std::vector<Cotangent> sort_transpose(const TransposeRuleArgs& a) {
  const auto num_keys = static_cast<size_t>(a.eqn.params.get_int("num_keys"));
  std::vector<Atom> keys;
  for (size_t i = 0; i < num_keys; ++i) {
    if (a.args[i].linear)
      throw UnsupportedError(
          fmt::format("transpose: sort is not linear in its key operand {} (from {})", i,
                      a.eqn.source.summarize()));
    keys.push_back(a.args[i].value);
  }
  const ShapedArray& aval = keys[0].aval();
  Atom iota = broadcasted_iota(a.b, DType::i32, aval.shape, a.eqn.params.get_int("dimension"));
  Atom perm = sorted_along(a.b, a.eqn, keys, iota);
  std::vector<Cotangent> cts(a.args.size());
  for (size_t i = num_keys; i < a.args.size(); ++i)
    if (a.args[i].linear && a.cts[i]) cts[i] = sorted_along(a.b, a.eqn, {perm}, *a.cts[i]);
  return cts;
}

// top_k's tangent: the operand's tangent at the chosen positions (JAX's _top_k_jvp: a gather
// whose index vectors are iotas over the other dims and the indices along the axis).
std::vector<Tangent> top_k_jvp(const JvpRuleArgs& a) {
  if (!a.tangents[0]) return {std::nullopt, std::nullopt};
  const Atom indices = a.primal_outs[1];
  const Shape& shape = indices.aval().shape;
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t axis = a.eqn.params.get_int("axis");
  Shape column_shape = shape;
  column_shape.push_back(1);
  std::vector<Atom> columns;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) continue;
    const Atom counted = iota(a.b, DType::i32, shape[d]);
    columns.push_back(broadcast_in_dim(a.b, counted, column_shape, {d}));
  }
  columns.insert(columns.begin() + axis, reshape(a.b, indices, column_shape));
  const Atom where = concatenate(a.b, columns, rank);
  std::vector<int64_t> all(static_cast<size_t>(rank));
  std::iota(all.begin(), all.end(), 0);
  const GatherDimensionNumbers dn{{}, all, all, {}, {}};
  return {gather(a.b, *a.tangents[0], where, dn, Shape(static_cast<size_t>(rank), 1),
                 GatherScatterMode::promise_in_bounds),
          std::nullopt};
}

}  // namespace

void register_reduction_ad_rules() {
  define_pass_rules("top_k").jvp = top_k_jvp;
  deflinear("reduce_sum", [](const TransposeRuleArgs& a) {
    const Shape& in_shape = a.args[0].aval().shape;
    std::vector<int64_t> kept = kept_dims(in_shape.size(), a.eqn.params.get_ints("axes"));
    return std::vector<Cotangent>{broadcast_in_dim(a.b, *a.cts[0], in_shape, kept)};
  });
  defjvp2("reduce_max", {chooser_jvp});
  defjvp2("reduce_min", {chooser_jvp});
  define_pass_rules("reduce_prod").jvp_full = reduce_prod_jvp;
  PassRules& sort = define_pass_rules("sort");
  sort.jvp = sort_jvp;
  sort.transpose = sort_transpose;
}

}  // namespace cjax
