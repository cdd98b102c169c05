// Autodiff rules of dot_general: bilinear jvp, and JAX's transpose rules, which pick the
// dimension numbers so that the transposed product lands in the operand's layout (adding a
// `transpose` eqn only when it does not).
#include <algorithm>
#include <numeric>

#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

std::vector<int64_t> remaining(int64_t n, const std::vector<int64_t>& a,
                               const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end())
      out.push_back(i);
  return out;
}

std::vector<int64_t> range(int64_t start, size_t n) {
  std::vector<int64_t> out(n);
  std::iota(out.begin(), out.end(), start);
  return out;
}

std::vector<int64_t> argsort(const std::vector<int64_t>& xs) {
  std::vector<int64_t> idx(xs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return xs[a] < xs[b]; });
  return idx;
}

// The cotangent of dot_general's lhs `x` given the output cotangent `g` and the rhs `y`.
// With swap_ans, `x` is the original rhs and the output's free dims come in (y, x) order.
Atom transpose_lhs(JaxprBuilder& b, const Atom& g, const ShapedArray& x, const Atom& y,
                   const DotDimensionNumbers& dn, const Params& params, bool swap_ans) {
  int64_t x_ndim = x.rank(), y_ndim = y.aval().rank();
  std::vector<int64_t> x_kept = remaining(x_ndim, dn.lhs_contract, dn.lhs_batch);
  std::vector<int64_t> y_kept = remaining(y_ndim, dn.rhs_contract, dn.rhs_batch);
  size_t nb = dn.lhs_batch.size();
  std::vector<int64_t> ans_batch = range(0, nb), ans_y;
  if (swap_ans)
    ans_y = range(int64_t(nb), y_kept.size());
  else
    ans_y = range(int64_t(nb + x_kept.size()), y_kept.size());
  DotDimensionNumbers dims{ans_y, y_kept, ans_batch, dn.rhs_batch};
  std::vector<int64_t> by_y = argsort(dn.rhs_contract);
  std::vector<int64_t> unsorted(dn.lhs_batch);
  unsorted.insert(unsorted.end(), x_kept.begin(), x_kept.end());
  for (int64_t i : by_y) unsorted.push_back(dn.lhs_contract[size_t(i)]);
  const ParamValue* precision = params.find("precision");
  const ParamValue* preferred = params.find("preferred_element_type");
  Atom out = lax_ops::dot_general(b, g, y, dims, preferred ? *preferred : ParamValue(NoneParam{}),
                                  precision ? *precision : ParamValue(NoneParam{}));
  Atom x_bar = lax_ops::transpose(b, out, argsort(unsorted));
  if (x_bar.aval().dtype != x.dtype)
    x_bar = lax_ops::convert_element_type(b, x_bar, x.dtype, x.weak_type);
  return x_bar;
}

DotDimensionNumbers swapped(const DotDimensionNumbers& dn) {
  return {dn.rhs_contract, dn.lhs_contract, dn.rhs_batch, dn.lhs_batch};
}

}  // namespace

void register_dot_general_ad_rules() {
  auto emit_like = [](JaxprBuilder& b, const Atom& x, const Atom& y, const Eqn& eqn) -> Atom {
    return b.emit1("dot_general", {x, y}, eqn.params);
  };
  ad::defjvp("dot_general", {[emit_like](JaxprBuilder& b, const Atom& g, auto p, const Eqn& e) {
                               return emit_like(b, g, p[1], e);
                             },
                             [emit_like](JaxprBuilder& b, const Atom& g, auto p, const Eqn& e) {
                               return emit_like(b, p[0], g, e);
                             }});

  define_pass_rules("dot_general").transpose = [](const TransposeRuleArgs& a) {
    auto dn = DotDimensionNumbers::from_param(a.eqn.params.at("dimension_numbers"));
    const Atom& g = *a.cts[0];
    std::vector<Cotangent> cts(2);
    if (a.args[0].linear && a.args[1].linear)
      ad::unsupported("transpose: dot_general of two linear values is not linear", a.eqn);
    if (a.args[0].linear)
      cts[0] = transpose_lhs(a.b, g, a.args[0].aval(), a.args[1].value, dn, a.eqn.params, false);
    if (a.args[1].linear)
      cts[1] =
          transpose_lhs(a.b, g, a.args[1].aval(), a.args[0].value, swapped(dn), a.eqn.params, true);
    return cts;
  };
}

}  // namespace cjax
