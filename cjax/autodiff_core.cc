#include "cjax/autodiff_core.h"

#include <fmt/format.h>

#include "cjax/backend.h"
#include "cjax/derivative_cache.h"
#include "cjax/eval_jaxpr.h"
#include "cjax/jit_cache.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "ir/errors.h"
#include "ir/exact_text.h"
#include "passes/jvp.h"
#include "passes/pipeline.h"
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

// What, besides the program, a training step depends on.
std::string step_options_key(const StepOptions& o) {
  std::string key = o.recompute_cheap_residuals ? "recompute:" : "jax:";
  key += o.sum_cotangents_in_order ? "in-order:" : "jax-sums:";
  for (bool d : o.out_differentiated) key += d ? '1' : '0';
  key += ':';
  for (bool w : o.wrt) key += w ? '1' : '0';
  return key;
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
  auto jvp = memoized_derivative<JvpJaxpr>("jvp", j, "", [&] {
    return jvp_jaxpr(j, std::vector<bool>(j.invars.size(), true), /*instantiate=*/true);
  });
  std::vector<Array> args(primals.begin(), primals.end());
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (has_tangent_space(j.invars[i].aval().dtype))
      args.push_back(coerce_to_aval(tangents[i], strong(j.invars[i].aval()), "jvp", "tangent", i));
  std::vector<Array> all = eval_jaxpr(jvp->jaxpr, f.consts, args);
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
  auto lr =
      memoized_derivative<LinearizeResult>("linearize", j, "", [&] { return linearize_jaxpr(j); });
  expect_no_consts("linearize", lr->lin);
  std::vector<Array> all = eval_jaxpr(lr->fwd, f.consts, primals);
  size_t m = j.outvars.size();
  outs_.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
  residuals_.assign(all.begin() + static_cast<std::ptrdiff_t>(m), all.end());
  for (const Var& v : j.invars) in_avals_.push_back(strong(v.aval()));
  for (const Atom& o : j.outvars) out_avals_.push_back(strong(o.aval()));
  in_differentiable_ = lr->in_differentiable;
  out_nonzero_ = lr->out_nonzero;
  lin_ = std::shared_ptr<const Jaxpr>(lr, &lr->lin);
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

VjpFlat::VjpFlat(const ClosedTrace& f, std::span<const Array> primals,
                 const std::vector<bool>& out_differentiated) {
  const Jaxpr& j = f.jaxpr;
  check_count("vjp", "primals", primals.size(), j.invars.size());
  // When compiled code runs these programs, they keep fewer residuals and recompute the cheap
  // ones in the backward loops. (Under a trace the programs are inlined, and what is printed
  // stays JAX's.)
  StepOptions options;
  options.out_differentiated = out_differentiated;
  options.recompute_cheap_residuals = !is_tracing() && current_backend() && !interpreter_forced();
  options.sum_cotangents_in_order = !is_tracing();
  auto p = memoized_derivative<TrainingStep>("vjp", j, step_options_key(options),
                                             [&] { return training_step(j, options); });
  expect_no_consts("vjp", p->bwd);
  std::vector<Array> all = eval_jaxpr(p->fwd, f.consts, primals);
  size_t m = j.outvars.size();
  outs_.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
  residuals_.assign(all.begin() + static_cast<std::ptrdiff_t>(m), all.end());
  for (size_t i = 0; i < m; ++i)
    if (out_differentiated.empty() || out_differentiated[i])
      ct_avals_.push_back(strong(j.outvars[i].aval()));
  bwd_ = std::shared_ptr<const Jaxpr>(p, &p->bwd);
}

std::vector<Array> VjpFlat::apply(std::span<const Array> cotangents) const {
  check_count("vjp", "cotangents", cotangents.size(), ct_avals_.size());
  std::vector<Array> args = residuals_;
  for (size_t i = 0; i < cotangents.size(); ++i)
    args.push_back(coerce_to_aval(cotangents[i], ct_avals_[i], "vjp", "cotangent", i));
  return eval_jaxpr(*bwd_, {}, args);
}

// ---- value_and_grad ---------------------------------------------------------------------------

namespace {

// JAX's _one(ans): a 1 of the output's dtype (weak when the output is).
Array one_like(const ShapedArray& aval) {
  return Array::from_buffer(runtime::Buffer::full(ShapedArray(aval.dtype, {}), 1.0),
                            aval.weak_type);
}

GradValues replay_value_and_grad(const ClosedTrace& f, std::span<const Array> primals,
                                 const std::vector<bool>& out_differentiated) {
  VjpFlat v(f, primals, out_differentiated);
  const Array seed = one_like(f.jaxpr.outvars[0].aval());
  std::vector<Array> cts = v.apply(std::span<const Array>(&seed, 1));
  return {v.outs(), std::move(cts)};
}

// The whole computation as one program over (f's captured values, f's invars): its outputs,
// then the invars' cotangents.
ClosedTrace value_and_grad_program(const Jaxpr& f, const std::vector<bool>& out_differentiated) {
  StepOptions options;
  options.out_differentiated = out_differentiated;
  TrainingStep p = training_step(f, options);
  expect_no_consts("grad", p.bwd);
  std::vector<ShapedArray> in_avals;
  for (const Var& v : f.constvars) in_avals.push_back(v.aval());
  for (const Var& v : f.invars) in_avals.push_back(v.aval());
  const size_t nc = f.constvars.size(), m = f.outvars.size();
  // Strong, as vjp's cotangents are (coerce_to_aval): the same program as the replay's.
  const Array seed = one_like(strong(f.outvars[0].aval()));
  return trace_to_jaxpr(
      [&](std::span<const Array> in) {
        std::vector<Array> all = eval_jaxpr(p.fwd, in.first(nc), in.subspan(nc));
        std::vector<Array> bwd_in(all.begin() + static_cast<std::ptrdiff_t>(m), all.end());
        bwd_in.push_back(seed);
        std::vector<Array> out(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
        for (Array& ct : eval_jaxpr(p.bwd, {}, bwd_in)) out.push_back(std::move(ct));
        return out;
      },
      in_avals);
}

// At most this many differentiated programs per grad function: a function that makes a new
// policy on every call (a checkpoint built inside it) has a new key each time.
constexpr size_t kMaxGradPrograms = 64;

}  // namespace

GradValues value_and_grad_flat(const ClosedTrace& f, std::span<const Array> primals,
                               const std::vector<bool>& out_differentiated, JitCache* cache) {
  if (!cache || is_tracing()) return replay_value_and_grad(f, primals, out_differentiated);
  // f's captured values are inputs of the program, not part of its key; policies are keyed by
  // identity, and the entry keeps them alive.
  std::vector<std::shared_ptr<const void>> policies;
  ExactTextWriter text(&policies);
  text.jaxpr(f.jaxpr, /*consts_are_inputs=*/true);
  if (!text.exact()) return replay_value_and_grad(f, primals, out_differentiated);
  std::string key = text.take();
  for (bool d : out_differentiated) key += d ? '1' : '0';
  std::shared_ptr<JitEntry> entry = cache->find(key);
  if (!entry) {
    log_trace("grad: differentiating", primals);
    auto fresh = std::make_shared<JitEntry>();
    fresh->closed = value_and_grad_program(f.jaxpr, out_differentiated);
    fresh->pinned_policies = std::move(policies);
    if (cache->size() >= kMaxGradPrograms) cache->clear();
    entry = cache->insert(key, std::move(fresh));
  }
  std::vector<Array> inputs = f.consts;
  inputs.insert(inputs.end(), primals.begin(), primals.end());
  std::vector<Array> all = run_jit_entry(*entry, inputs);
  const auto m = static_cast<std::ptrdiff_t>(f.jaxpr.outvars.size());
  return {std::vector<Array>(all.begin(), all.begin() + m),
          std::vector<Array>(all.begin() + m, all.end())};
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
