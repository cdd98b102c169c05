#include "compiler/autodiff_core.h"

#include <fmt/format.h>

#include "compiler/backend.h"
#include "compiler/eval_jaxpr.h"
#include "compiler/lax.h"
#include "compiler/numpy.h"
#include "ir/errors.h"
#include "passes/ad_rules/ops.h"
#include "passes/dce.h"
#include "passes/jvp.h"
#include "passes/recompute_residuals.h"
#include "passes/transpose.h"
#include "passes/vjp.h"

namespace cjax::detail {
namespace {

ShapedArray strong(const ShapedArray& a) {
  return ShapedArray(a.dtype, a.shape);
}

void check_count(std::string_view api, std::string_view what, size_t got, size_t want) {
  if (got != want)
    throw TypeError(fmt::format("{}: {} {} given for a function of {}", api, got, what, want));
}

// The passes' linear and backward programs read no constants; a constvar there would need a
// value we do not have.
void expect_no_consts(std::string_view api, const Jaxpr& j) {
  if (!j.constvars.empty())
    throw Error(fmt::format("{}: the transformed program has {} constvars (expected none)", api,
                            j.constvars.size()));
}

}  // namespace

Array coerce_to_aval(const Array& x, const ShapedArray& aval, std::string_view api,
                     std::string_view what, size_t index) {
  if (!x.defined())
    throw TypeError(fmt::format("{}: {} {} is a null cjax::Array", api, what, index));
  if (x.aval().same_type(aval)) return x;
  if (x.shape() == aval.shape && x.weak_type() && is_floating(x.dtype()) && is_floating(aval.dtype))
    return lax::convert_element_type(x, aval.dtype, false);
  throw TypeError(fmt::format("{}: {} {} has type {}, expected {}", api, what, index,
                              x.aval().str_short(), aval.str_short()));
}

Array zeros_of(const ShapedArray& aval) {
  return numpy::zeros(aval.shape, aval.dtype);
}

void check_grad_output(std::string_view api, size_t num_leaves, const ShapedArray* aval) {
  if (num_leaves != 1 || !aval)
    throw TypeError(fmt::format(
        "{}: the function must return one scalar Array, but its output has {} Array leaves", api,
        num_leaves));
  if (aval->rank() != 0)
    throw TypeError(fmt::format(
        "{}: gradient only defined for scalar-output functions, but the output has shape {} ({}); "
        "use vjp or jacrev for non-scalar outputs",
        api, shape_str(aval->shape), aval->str_short()));
  check_grad_output_dtype(api, aval->dtype);
}

// ---- jvp ------------------------------------------------------------------------------------

JvpValues jvp_flat(const ClosedTrace& f, std::span<const Array> primals,
                   std::span<const Array> tangents) {
  const Jaxpr& j = f.jaxpr;
  check_count("jvp", "primals", primals.size(), j.invars.size());
  check_count("jvp", "tangents", tangents.size(), j.invars.size());
  JvpJaxpr jvp = jvp_jaxpr(j, std::vector<bool>(j.invars.size(), true), /*instantiate=*/true);
  std::vector<Array> args(primals.begin(), primals.end());
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (has_tangent_space(j.invars[i].aval().dtype))
      args.push_back(coerce_to_aval(tangents[i], strong(j.invars[i].aval()), "jvp", "tangent", i));
  std::vector<Array> all = eval_jaxpr(jvp.jaxpr, f.consts, args);
  size_t m = j.outvars.size();
  JvpValues r;
  r.outs.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
  r.tangent_outs.assign(all.begin() + static_cast<std::ptrdiff_t>(m), all.end());
  return r;
}

// ---- linearize ------------------------------------------------------------------------------

LinearizedFlat::LinearizedFlat(const ClosedTrace& f, std::span<const Array> primals) {
  const Jaxpr& j = f.jaxpr;
  check_count("linearize", "primals", primals.size(), j.invars.size());
  LinearizeResult lr = linearize_jaxpr(j);
  expect_no_consts("linearize", lr.lin);
  std::vector<Array> all = eval_jaxpr(lr.fwd, f.consts, primals);
  size_t m = j.outvars.size();
  outs_.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
  residuals_.assign(all.begin() + static_cast<std::ptrdiff_t>(m), all.end());
  for (const Var& v : j.invars) in_avals_.push_back(strong(v.aval()));
  for (const Atom& o : j.outvars) out_avals_.push_back(strong(o.aval()));
  in_differentiable_ = lr.in_differentiable;
  out_nonzero_ = lr.out_nonzero;
  lin_ = std::make_shared<const Jaxpr>(std::move(lr.lin));
}

std::vector<Array> LinearizedFlat::apply(std::span<const Array> tangents) const {
  check_count("linearize", "tangents", tangents.size(), in_avals_.size());
  std::vector<Array> args = residuals_;
  for (size_t i = 0; i < tangents.size(); ++i)
    if (in_differentiable_[i])
      args.push_back(coerce_to_aval(tangents[i], in_avals_[i], "linearize", "tangent", i));
  std::vector<Array> nz = eval_jaxpr(*lin_, {}, args);
  std::vector<Array> out;
  size_t next = 0;
  for (size_t i = 0; i < out_avals_.size(); ++i)
    out.push_back(out_nonzero_[i] ? nz.at(next++) : zeros_of(out_avals_[i]));
  return out;
}

// ---- vjp ------------------------------------------------------------------------------------

VjpPrograms vjp_programs(const Jaxpr& jaxpr, const std::vector<bool>& out_differentiated) {
  size_t m = jaxpr.outvars.size();
  bool all = true;
  for (size_t i = 0; i < out_differentiated.size() && i < m; ++i)
    all = all && out_differentiated[i];
  if (all) {
    VjpResult r = vjp_jaxpr(jaxpr);
    return {std::move(r.fwd), std::move(r.bwd), r.num_residuals};
  }
  if (out_differentiated.size() != m)
    throw Error(fmt::format("vjp: {} output flags for {} outputs", out_differentiated.size(), m));

  LinearizeResult lin = linearize_jaxpr(jaxpr);
  // The linear program's outputs are the tangents of the outputs in out_nonzero; keep those of
  // the differentiated outputs.
  std::vector<bool> keep;
  for (size_t i = 0; i < m; ++i)
    if (lin.out_nonzero[i]) keep.push_back(out_differentiated[i]);
  DceResult live = dce(lin.lin, keep);
  size_t num_res = lin.num_residuals;
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

  VjpPrograms out;
  out.fwd = std::move(lin.fwd);
  std::vector<Atom> fwd_outs(out.fwd.outvars.begin(),
                             out.fwd.outvars.begin() + static_cast<std::ptrdiff_t>(m));
  for (size_t r : kept_res) fwd_outs.push_back(out.fwd.outvars[m + r]);
  out.fwd.outvars = std::move(fwd_outs);
  out.num_residuals = kept_res.size();

  // (residuals..., one cotangent per differentiated output) -> one cotangent per input.
  JaxprBuilder b;
  std::vector<Var> invars(bwd_nz.invars.begin(),
                          bwd_nz.invars.begin() + static_cast<std::ptrdiff_t>(kept_res.size()));
  size_t next_ct = kept_res.size();
  for (size_t i = 0; i < m; ++i) {
    if (!out_differentiated[i]) continue;
    if (lin.out_nonzero[i]) {
      invars.push_back(bwd_nz.invars[next_ct++]);
    } else {
      invars.emplace_back(strong(jaxpr.outvars[i].aval()));
    }
  }
  for (Eqn& e : bwd_nz.eqns) b.append(std::move(e));
  std::vector<Atom> outvars;
  size_t next_out = 0;
  for (size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (lin.in_differentiable[i])
      outvars.push_back(bwd_nz.outvars[next_out++]);
    else
      outvars.push_back(ad::zeros_like_aval(b, strong(jaxpr.invars[i].aval())));
  }
  out.bwd = b.build(std::move(invars), std::move(outvars), bwd_nz.constvars, bwd_nz.consts);
  return out;
}

size_t recompute_cheap_residuals(VjpPrograms& p) {
  ResidualSplit s = cjax::recompute_cheap_residuals(p.fwd, p.bwd, p.num_residuals);
  p = {std::move(s.fwd), std::move(s.bwd), s.num_residuals};
  return s.recomputed;
}

VjpFlat::VjpFlat(const ClosedTrace& f, std::span<const Array> primals,
                 const std::vector<bool>& out_differentiated) {
  const Jaxpr& j = f.jaxpr;
  check_count("vjp", "primals", primals.size(), j.invars.size());
  VjpPrograms p = vjp_programs(j, out_differentiated);
  expect_no_consts("vjp", p.bwd);
  // Compiled code runs these programs: keep fewer residuals and recompute the cheap ones in the
  // backward loops. (Under a trace the programs are inlined, and what is printed stays JAX's.)
  if (!is_tracing() && current_backend() && !interpreter_forced()) recompute_cheap_residuals(p);
  std::vector<Array> all = eval_jaxpr(p.fwd, f.consts, primals);
  size_t m = j.outvars.size();
  outs_.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
  residuals_.assign(all.begin() + static_cast<std::ptrdiff_t>(m), all.end());
  for (size_t i = 0; i < m; ++i)
    if (out_differentiated.empty() || out_differentiated[i])
      ct_avals_.push_back(strong(j.outvars[i].aval()));
  bwd_ = std::make_shared<const Jaxpr>(std::move(p.bwd));
}

std::vector<Array> VjpFlat::apply(std::span<const Array> cotangents) const {
  check_count("vjp", "cotangents", cotangents.size(), ct_avals_.size());
  std::vector<Array> args = residuals_;
  for (size_t i = 0; i < cotangents.size(); ++i)
    args.push_back(coerce_to_aval(cotangents[i], ct_avals_[i], "vjp", "cotangent", i));
  return eval_jaxpr(*bwd_, {}, args);
}

}  // namespace cjax::detail

namespace cjax {

void check_grad_output_dtype(std::string_view api, DType output) {
  if (!is_floating(output))
    throw TypeError(fmt::format(
        "{} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
        "got {}. For differentiation of functions with integer outputs, use vjp directly.",
        api, long_name(output)));
}

void check_grad_input_dtype(std::string_view api, DType input, bool allow_int) {
  if (is_floating(input)) return;
  if (is_integer(input) || input == DType::bool_) {
    if (allow_int) return;
    throw TypeError(fmt::format(
        "{} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
        "np.inexact), but got {}. If you want to use Boolean- or integer-valued inputs, use vjp "
        "or set allow_int to True.",
        api, long_name(input)));
  }
  throw TypeError(fmt::format(
      "{} requires numerical-valued inputs (input dtype that is a sub-dtype of np.bool_ or "
      "np.number), but got {}.",
      api, long_name(input)));
}

}  // namespace cjax
