#include "passes/vjp.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "passes/ad_rules/ops.h"
#include "passes/jvp.h"
#include "passes/partial_eval.h"
#include "passes/transpose.h"

namespace cjax {
namespace {

// Arguments first (argument order), then the rest as they came (first-read order).
std::vector<size_t> residual_order(const std::vector<Var>& residuals,
                                   const std::vector<Var>& args) {
  std::unordered_map<Var, size_t, VarHash> arg_index;
  for (size_t i = 0; i < args.size(); ++i) arg_index.emplace(args[i], i);
  std::vector<std::pair<size_t, size_t>> from_args;  // (arg index, residual index)
  std::vector<size_t> order, others;
  for (size_t r = 0; r < residuals.size(); ++r) {
    auto it = arg_index.find(residuals[r]);
    if (it != arg_index.end())
      from_args.emplace_back(it->second, r);
    else
      others.push_back(r);
  }
  std::sort(from_args.begin(), from_args.end());
  for (auto [a, r] : from_args) order.push_back(r);
  order.insert(order.end(), others.begin(), others.end());
  return order;
}

}  // namespace

LinearizeResult linearize_jaxpr(const Jaxpr& jaxpr) {
  LinearizeResult out;
  size_t n = jaxpr.invars.size();
  for (const Var& v : jaxpr.invars)
    out.in_differentiable.push_back(has_tangent_space(v.aval().dtype));
  JvpJaxpr jvp = jvp_jaxpr(jaxpr, out.in_differentiable, /*instantiate=*/false);
  out.out_nonzero = jvp.out_nonzero;

  size_t num_tangents = jvp.jaxpr.invars.size() - n;
  std::vector<bool> unknown(n, false);
  unknown.resize(n + num_tangents, true);
  std::vector<bool> instantiate(jaxpr.outvars.size(), false);
  instantiate.resize(jvp.jaxpr.outvars.size(), true);
  PartialEvalResult pe = partial_eval(jvp.jaxpr, unknown, instantiate);
  // A partial-eval rule that stages a primal output would shift every output below.
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i)
    if (pe.out_unknown[i])
      throw UnsupportedError(
          fmt::format("linearize: primal output {} cannot be computed without the tangents", i));

  // Reorder the residuals on both sides.
  std::vector<size_t> order = residual_order(pe.residuals, jaxpr.invars);
  size_t num_primal_outs = jaxpr.outvars.size();
  std::vector<Atom> fwd_outs(pe.known.outvars.begin(), pe.known.outvars.begin() + num_primal_outs);
  std::vector<Var> lin_invars;
  for (size_t r : order) {
    fwd_outs.push_back(pe.residuals[r]);
    lin_invars.push_back(pe.residuals[r]);
  }
  lin_invars.insert(lin_invars.end(), pe.staged.invars.begin() + pe.residuals.size(),
                    pe.staged.invars.end());
  pe.known.outvars = std::move(fwd_outs);
  pe.staged.invars = std::move(lin_invars);
  out.fwd = std::move(pe.known);
  out.lin = std::move(pe.staged);
  out.num_residuals = pe.residuals.size();
  return out;
}

VjpResult vjp_jaxpr(const Jaxpr& jaxpr) {
  LinearizeResult lin = linearize_jaxpr(jaxpr);
  std::vector<bool> linear(lin.num_residuals, false);
  linear.resize(lin.lin.invars.size(), true);
  Jaxpr bwd_nz = transpose_jaxpr(lin.lin, linear);

  // Widen the signature to every primal output and input: cotangents of outputs whose tangent is
  // zero are accepted and ignored; inputs without a tangent get zeros.
  JaxprBuilder b;
  std::vector<Var> invars(bwd_nz.invars.begin(), bwd_nz.invars.begin() + lin.num_residuals);
  size_t next_ct = lin.num_residuals;
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    if (lin.out_nonzero[i]) {
      invars.push_back(bwd_nz.invars[next_ct++]);
    } else {
      const ShapedArray& a = jaxpr.outvars[i].aval();
      invars.emplace_back(ShapedArray(a.dtype, a.shape));
    }
  }
  for (Eqn& e : bwd_nz.eqns) b.append(std::move(e));
  std::vector<Atom> outvars;
  size_t next_out = 0;
  for (size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (lin.in_differentiable[i]) {
      outvars.push_back(bwd_nz.outvars[next_out++]);
    } else {
      const ShapedArray& a = jaxpr.invars[i].aval();
      outvars.push_back(ad::zeros_like_aval(b, ShapedArray(a.dtype, a.shape)));
    }
  }
  VjpResult r;
  r.bwd = b.build(std::move(invars), std::move(outvars), bwd_nz.constvars, bwd_nz.consts);
  r.fwd = std::move(lin.fwd);
  r.num_residuals = lin.num_residuals;
  return r;
}

}  // namespace cjax
