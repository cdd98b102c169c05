#include "passes/vjp.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "passes/dce.h"
#include "passes/jvp.h"
#include "passes/lax/lax.h"
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
  PartialEvalResult pe =
      partial_eval(jvp.jaxpr, unknown, instantiate, /*constants_as_residuals=*/true);
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
    fwd_outs.push_back(pe.known.outvars[num_primal_outs + r]);
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

namespace {

// The transposed linear program widened to the primal signature: it reads (residuals..., one
// cotangent per output in `has_ct`) and returns one cotangent per primal input. Cotangents of
// outputs whose tangent is zero are accepted and ignored; inputs without a tangent get zeros.
Jaxpr widen_backward(Jaxpr bwd_nz, size_t num_residuals, const Jaxpr& primal,
                     const LinearizeResult& lin, const std::vector<bool>& has_ct) {
  auto strong = [](const ShapedArray& a) { return ShapedArray(a.dtype, a.shape); };
  JaxprBuilder b;
  std::vector<Var> invars(bwd_nz.invars.begin(),
                          bwd_nz.invars.begin() + static_cast<std::ptrdiff_t>(num_residuals));
  size_t next_ct = num_residuals;
  for (size_t i = 0; i < primal.outvars.size(); ++i) {
    if (!has_ct[i]) continue;
    if (lin.out_nonzero[i])
      invars.push_back(bwd_nz.invars[next_ct++]);
    else
      invars.emplace_back(strong(primal.outvars[i].aval()));
  }
  for (Eqn& e : bwd_nz.eqns) b.append(std::move(e));
  std::vector<Atom> outvars;
  size_t next_out = 0;
  for (size_t i = 0; i < primal.invars.size(); ++i) {
    if (lin.in_differentiable[i])
      outvars.push_back(bwd_nz.outvars[next_out++]);
    else
      outvars.push_back(lax_ops::zeros_like_aval(b, strong(primal.invars[i].aval())));
  }
  return b.build(std::move(invars), std::move(outvars), bwd_nz.constvars, bwd_nz.consts);
}

}  // namespace

VjpResult vjp_jaxpr(const Jaxpr& jaxpr) {
  LinearizeResult lin = linearize_jaxpr(jaxpr);
  std::vector<bool> linear(lin.num_residuals, false);
  linear.resize(lin.lin.invars.size(), true);
  Jaxpr bwd_nz = transpose_jaxpr(lin.lin, linear);
  VjpResult r;
  r.bwd = widen_backward(std::move(bwd_nz), lin.num_residuals, jaxpr, lin,
                         std::vector<bool>(jaxpr.outvars.size(), true));
  r.fwd = std::move(lin.fwd);
  r.num_residuals = lin.num_residuals;
  return r;
}

VjpResult vjp_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& out_differentiated) {
  const size_t m = jaxpr.outvars.size();
  if (std::all_of(out_differentiated.begin(), out_differentiated.end(), [](bool d) { return d; }))
    return vjp_jaxpr(jaxpr);
  if (out_differentiated.size() != m)
    throw Error(fmt::format("vjp: {} output flags for {} outputs", out_differentiated.size(), m));

  LinearizeResult lin = linearize_jaxpr(jaxpr);
  // The linear program's outputs are the tangents of the outputs in out_nonzero; keep those of
  // the differentiated outputs, and the residuals what is left of it reads.
  std::vector<bool> keep;
  for (size_t i = 0; i < m; ++i)
    if (lin.out_nonzero[i]) keep.push_back(out_differentiated[i]);
  DceResult live = dce(lin.lin, keep);
  const size_t num_res = lin.num_residuals;
  std::vector<Var> lin_invars;
  std::vector<size_t> kept_res;
  for (size_t r = 0; r < num_res; ++r)
    if (live.used_inputs[r]) {
      lin_invars.push_back(live.jaxpr.invars[r]);
      kept_res.push_back(r);
    }
  lin_invars.insert(lin_invars.end(),
                    live.jaxpr.invars.begin() + static_cast<std::ptrdiff_t>(num_res),
                    live.jaxpr.invars.end());
  live.jaxpr.invars = std::move(lin_invars);
  std::vector<bool> linear(kept_res.size(), false);
  linear.resize(live.jaxpr.invars.size(), true);
  Jaxpr bwd_nz = transpose_jaxpr(live.jaxpr, linear);

  VjpResult out;
  out.bwd = widen_backward(std::move(bwd_nz), kept_res.size(), jaxpr, lin, out_differentiated);
  out.fwd = std::move(lin.fwd);
  std::vector<Atom> fwd_outs(out.fwd.outvars.begin(),
                             out.fwd.outvars.begin() + static_cast<std::ptrdiff_t>(m));
  for (size_t r : kept_res) fwd_outs.push_back(out.fwd.outvars[m + r]);
  out.fwd.outvars = std::move(fwd_outs);
  out.num_residuals = kept_res.size();
  return out;
}

}  // namespace cjax
