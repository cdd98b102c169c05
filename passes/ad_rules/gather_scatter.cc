// Autodiff rules of gather and the scatters (jax/_src/lax/slicing.py): gather is linear in its
// operand, its transpose a scatter-add; scatter-add is linear in operand and updates, its
// transpose a gather; scatter (replace) differentiates by masking what each update overwrites;
// scatter-mul's updates, and its transpose, need unique indices (as JAX); scatter-min and -max
// share a tie between the values that reach the extremum. Indices are never differentiated.
#include "ir/gather_params.h"
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace ad;
using namespace lax_ops;

struct GatherParams {
  GatherDimensionNumbers dn;
  Shape slice_sizes;
  GatherScatterMode mode;
  bool unique, sorted;
  explicit GatherParams(const Params& p)
      : dn(GatherDimensionNumbers::from_param(p.at("dimension_numbers"))),
        slice_sizes(p.get_ints("slice_sizes")),
        mode(gather_scatter_mode(p.at("mode"))),
        unique(p.get_bool("unique_indices")),
        sorted(p.get_bool("indices_are_sorted")) {}
};

struct ScatterParams {
  ScatterDimensionNumbers dn;
  GatherScatterMode mode;
  bool unique, sorted;
  explicit ScatterParams(const Params& p)
      : dn(ScatterDimensionNumbers::from_param(p.at("dimension_numbers"))),
        mode(gather_scatter_mode(p.at("mode"))),
        unique(p.get_bool("unique_indices")),
        sorted(p.get_bool("indices_are_sorted")) {}
};

void expect_nonlinear_indices(const TransposeRuleArgs& a) {
  if (a.args[1].linear)
    unsupported("transpose: '" + a.eqn.prim->name + "' is not linear in its indices", a.eqn);
}

// What a scatter reads back from `x` at its own windows: the gather with the same dims (the
// updates' shape), filling with zeros.
Atom gather_windows(JaxprBuilder& b, const Atom& x, const Atom& indices, const ScatterParams& p,
                    const Shape& updates_shape) {
  return gather(b, x, indices, gather_of(p.dn),
                scatter_slice_sizes(p.dn, x.aval().rank(), updates_shape), p.mode,
                ParamValue(int64_t{0}));
}

Atom zeros_of(JaxprBuilder& b, const ShapedArray& aval) {
  return full(b, aval.shape, 0.0, aval.dtype);
}

Atom tangent_or_zeros(JaxprBuilder& b, const Tangent& t, const ShapedArray& aval) {
  return t ? *t : zeros_like_aval(b, aval);
}

// scatter (replace) with repeated indices: each operand element takes one update (the last one a
// scatter writes there) or keeps its value. Scattering each update's id (its position + 1, over
// its whole window) shows which: an operand element whose id stays 0 is kept, an update whose id
// reads back from its window wins there. The masked operand and updates then combine with
// scatter-add, which the tangents follow (JAX's _scatter_jvp).
std::vector<Tangent> scatter_jvp(const JvpRuleArgs& a) {
  const Atom& operand = a.primals[0];
  const Atom& indices = a.primals[1];
  const Atom& updates = a.primals[2];
  if (!a.tangents[0] && !a.tangents[2]) return {std::nullopt};
  const ScatterParams p(a.eqn.params);
  const Atom g_operand = tangent_or_zeros(a.b, a.tangents[0], operand.aval());
  const Atom g_updates = tangent_or_zeros(a.b, a.tangents[2], updates.aval());
  if (p.unique)
    return {scatter_op(a.b, "scatter", g_operand, indices, g_updates, p.dn, p.mode, p.sorted,
                       p.unique)};
  const Shape& updates_shape = updates.aval().shape;
  Shape ids_shape = updates_shape;
  for (int64_t d : p.dn.update_window_dims) ids_shape[d] = 1;
  int64_t num_ids = 1;
  for (int64_t n : ids_shape) num_ids *= n;
  const DType id_dtype = num_ids + 1 < (int64_t{1} << 32) ? DType::u32 : DType::u64;
  const Atom counted = iota(a.b, id_dtype, num_ids);
  const Atom shaped = reshape(a.b, counted, ids_shape);
  const Atom ones = full(a.b, ids_shape, 1.0, id_dtype);
  const Atom ids = add(a.b, shaped, ones);
  std::vector<int64_t> all_dims(updates_shape.size());
  for (size_t d = 0; d < all_dims.size(); ++d) all_dims[d] = static_cast<int64_t>(d);
  const Atom update_ids = broadcast_in_dim(a.b, ids, updates_shape, all_dims);
  const Atom no_ids = full(a.b, operand.aval().shape, 0.0, id_dtype);
  const Atom scattered_ids =
      scatter_op(a.b, "scatter", no_ids, indices, update_ids, p.dn, p.mode, p.sorted, p.unique);
  const Atom read_back = gather_windows(a.b, scattered_ids, indices, p, updates_shape);
  const Atom zero_id = full(a.b, operand.aval().shape, 0.0, id_dtype);
  const Atom kept = eq(a.b, scattered_ids, zero_id);
  const Atom won = eq(a.b, update_ids, read_back);
  const Atom zero_operand = zeros_like_aval(a.b, g_operand.aval());
  const Atom zero_updates = zeros_like_aval(a.b, g_updates.aval());
  const Atom masked_g_operand = select(a.b, kept, g_operand, zero_operand);
  const Atom masked_g_updates = select(a.b, won, g_updates, zero_updates);
  return {scatter_add(a.b, masked_g_operand, indices, masked_g_updates, p.dn, p.mode, p.sorted,
                      p.unique)};
}

// scatter-min / scatter-max: the output's tangent is the average of the tangents of the values
// that reach it (the operand's own and every update's equal to the result), as JAX's
// _scatter_extremal_jvp.
std::vector<Tangent> scatter_extremal_jvp(const JvpRuleArgs& a) {
  const Atom& operand = a.primals[0];
  const Atom& indices = a.primals[1];
  const Atom& updates = a.primals[2];
  if (!a.tangents[0] && !a.tangents[2]) return {std::nullopt};
  const ScatterParams p(a.eqn.params);
  const Shape& updates_shape = updates.aval().shape;
  const DType dt = operand.aval().dtype;
  const Atom g_operand = tangent_or_zeros(a.b, a.tangents[0], operand.aval());
  const Atom g_updates = tangent_or_zeros(a.b, a.tangents[2], updates.aval());
  const Atom out = a.primal_outs[0];
  const Atom initial = gather_windows(a.b, operand, indices, p, updates_shape);
  const Atom target = gather_windows(a.b, out, indices, p, updates_shape);
  const Atom succeeded = eq(a.b, updates, target);  // this update reached the result
  const Atom retained = eq(a.b, initial, target);   // so did the operand's value
  const Atom one_u = full(a.b, updates_shape, 1.0, dt);
  const Atom zero_u = full(a.b, updates_shape, 0.0, dt);
  const Atom hits = select(a.b, succeeded, one_u, zero_u);
  const Atom zeros_o = zeros_of(a.b, operand.aval());
  const Atom hit_counts = scatter_add(a.b, zeros_o, indices, hits, p.dn, p.mode);
  const Atom n = gather_windows(a.b, hit_counts, indices, p, updates_shape);
  const Atom ref_counts = scatter_add(a.b, zeros_o, indices, one_u, p.dn, p.mode);
  const Atom refs = gather_windows(a.b, ref_counts, indices, p, updates_shape);
  const Atom n_plus_one = add(a.b, n, one_u);
  const Atom share_with_operand = div(a.b, one_u, n_plus_one);
  const Atom share_alone = div(a.b, one_u, n);
  const Atom share = select(a.b, retained, share_with_operand, share_alone);
  const Atom update_coef = select(a.b, succeeded, share, zero_u);
  const Atom kept_share = select(a.b, retained, share_with_operand, zero_u);
  const Atom minus_one = full(a.b, updates_shape, -1.0, dt);
  const Atom lost = add(a.b, minus_one, kept_share);
  const Atom operand_coef = div(a.b, lost, refs);
  const Atom g_initial = gather_windows(a.b, g_operand, indices, p, updates_shape);
  const Atom from_operand = mul(a.b, g_initial, operand_coef);
  const Atom from_updates = mul(a.b, g_updates, update_coef);
  const Atom delta = add(a.b, from_operand, from_updates);
  return {scatter_add(a.b, g_operand, indices, delta, p.dn, p.mode)};
}

}  // namespace

void register_gather_scatter_ad_rules() {
  define_pass_rules("gather").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    if (!a.tangents[0]) return {std::nullopt};
    const GatherParams p(a.eqn.params);
    return {gather(a.b, *a.tangents[0], a.primals[1], p.dn, p.slice_sizes, p.mode,
                   ParamValue(int64_t{0}), p.unique, p.sorted)};
  };
  define_pass_rules("gather").transpose = [](const TransposeRuleArgs& a) {
    expect_nonlinear_indices(a);
    const GatherParams p(a.eqn.params);
    const Atom& ct = *a.cts[0];
    std::vector<Cotangent> cts(a.args.size());
    const Atom zeros = full(a.b, a.args[0].aval().shape, 0.0, ct.aval().dtype);
    cts[0] =
        scatter_add(a.b, zeros, a.args[1].value, ct, scatter_of(p.dn), p.mode, p.sorted, p.unique);
    return cts;
  };

  define_pass_rules("scatter-add").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    if (!a.tangents[0] && !a.tangents[2]) return {std::nullopt};
    const Atom g_operand = tangent_or_zeros(a.b, a.tangents[0], a.primals[0].aval());
    const Atom g_updates = tangent_or_zeros(a.b, a.tangents[2], a.primals[2].aval());
    return {emit1(a.b, "scatter-add", {g_operand, a.primals[1], g_updates}, a.eqn.params)};
  };
  define_pass_rules("scatter-add").transpose = [](const TransposeRuleArgs& a) {
    expect_nonlinear_indices(a);
    const ScatterParams p(a.eqn.params);
    const Atom& t = *a.cts[0];
    std::vector<Cotangent> cts(a.args.size());
    if (a.args[0].linear) cts[0] = t;
    if (a.args[2].linear)
      cts[2] = gather_windows(a.b, t, a.args[1].value, p, a.args[2].aval().shape);
    return cts;
  };

  define_pass_rules("scatter").jvp = scatter_jvp;
  define_pass_rules("scatter").transpose = [](const TransposeRuleArgs& a) {
    expect_nonlinear_indices(a);
    const ScatterParams p(a.eqn.params);
    if (!p.unique)
      unsupported(
          "transpose: scatter with indices not marked unique (its jvp masks repeated "
          "ones and transposes as scatter-add)",
          a.eqn);
    const Atom& t = *a.cts[0];
    std::vector<Cotangent> cts(a.args.size());
    if (a.args[0].linear) {
      const Atom zeros = zeros_of(a.b, a.args[2].aval());
      cts[0] =
          scatter_op(a.b, "scatter", t, a.args[1].value, zeros, p.dn, p.mode, p.sorted, p.unique);
    }
    if (a.args[2].linear)
      cts[2] = gather_windows(a.b, t, a.args[1].value, p, a.args[2].aval().shape);
    return cts;
  };

  define_pass_rules("scatter-mul").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    const ScatterParams p(a.eqn.params);
    const Atom& x = a.primals[0];
    const Atom& i = a.primals[1];
    const Atom& y = a.primals[2];
    std::vector<Atom> terms;
    if (a.tangents[0])
      terms.push_back(emit1(a.b, "scatter-mul", {*a.tangents[0], i, y}, a.eqn.params));
    if (a.tangents[2]) {
      if (!p.unique)
        unsupported("jvp: scatter-mul with respect to its updates needs unique indices (as JAX)",
                    a.eqn);
      const Atom zeros = zeros_like_aval(a.b, x.aval());
      const Atom spread =
          scatter_add(a.b, zeros, i, *a.tangents[2], p.dn, p.mode, p.sorted, p.unique);
      terms.push_back(mul(a.b, x, spread));
    }
    if (terms.empty()) return {std::nullopt};
    return {terms.size() == 1 ? terms[0] : add_any(a.b, terms[0], terms[1])};
  };
  define_pass_rules("scatter-mul").transpose = [](const TransposeRuleArgs& a) {
    expect_nonlinear_indices(a);
    const ScatterParams p(a.eqn.params);
    if (a.args[2].linear) unsupported("transpose: scatter-mul is not linear in its updates", a.eqn);
    const Atom& t = *a.cts[0];
    std::vector<Cotangent> cts(a.args.size());
    if (a.args[0].linear)
      cts[0] = emit1(a.b, "scatter-mul", {t, a.args[1].value, a.args[2].value}, a.eqn.params);
    return cts;
  };

  define_pass_rules("scatter-min").jvp = scatter_extremal_jvp;
  define_pass_rules("scatter-max").jvp = scatter_extremal_jvp;
}

}  // namespace cjax
