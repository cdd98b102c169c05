// Autodiff of user-defined derivatives (jax/_src/custom_derivatives.py, interpreters/ad.py):
// - custom_jvp_call: with a nonzero tangent, the user's rule replaces the call (JAX's
//   process_custom_jvp_call): its jaxpr is inlined on the primals and the tangents (zeros
//   instantiated). The rule usually calls the function itself, so the primal stays a
//   custom_jvp_call eqn, as JAX prints it.
// - custom_vjp_call: the user's fwd is inlined (it computes the outputs and the residuals) and
//   the tangents go through one custom_lin eqn, linear in them, whose transpose is the user's
//   bwd on the residuals and the output cotangents. custom_lin itself cannot be evaluated:
//   forward-mode differentiation of a custom_vjp function fails there, as JAX's does.
#include <fmt/format.h>

#include <memory>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/custom_rules.h"
#include "passes/inline.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace lax_ops;

// The primal operands (after the captured constants), with the tangents of those that have one.
struct Split {
  std::vector<Atom> primals;
  std::vector<Tangent> tangents;
};
Split split_consts(const Eqn& eqn, std::span<const Atom> primals,
                   std::span<const Tangent> tangents) {
  const size_t nc = custom_num_consts(eqn);
  for (size_t i = 0; i < nc; ++i)
    if (tangents[i])
      throw UnsupportedError(fmt::format(
          "Detected differentiation of a custom_jvp function with respect to a closed-over "
          "value. That isn't supported because the custom JVP rule only specifies how to "
          "differentiate the custom_jvp function with respect to explicit input parameters. "
          "('{}', from {})",
          custom_name(eqn), eqn.source.summarize()));
  return {{primals.begin() + nc, primals.end()}, {tangents.begin() + nc, tangents.end()}};
}

JvpFullResult custom_jvp_call_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                                  std::span<const Tangent> tangents) {
  Split s = split_consts(eqn, primals, tangents);
  const CustomJvpRule* rule = custom_rule<CustomJvpRule>(eqn, "jvp");
  if (!rule)
    ad::unsupported(fmt::format("jvp: custom_jvp_call '{}' has no rule to differentiate with (its "
                                "`jvp` was read from text)",
                                custom_name(eqn)),
                    eqn);
  // With symbolic_zeros the rule is told which tangents are zero; otherwise it gets zeros.
  const bool symbolic = custom_symbolic_zeros(eqn);
  std::vector<Atom> args = s.primals;
  auto zeros = std::make_unique<bool[]>(s.primals.size());
  for (size_t i = 0; i < s.primals.size(); ++i) {
    zeros[i] = symbolic && !s.tangents[i];
    if (s.tangents[i])
      args.push_back(*s.tangents[i]);
    else if (!symbolic)
      args.push_back(zeros_like_aval(b, s.primals[i].aval()));
  }
  const Jaxpr jvp =
      rule->jvp_jaxpr(avals_of(s.primals), std::span<const bool>(zeros.get(), s.primals.size()));
  const size_t n = eqn.outputs.size();
  if (jvp.outvars.size() != 2 * n)
    throw TypeError(fmt::format("custom_jvp '{}': the jvp rule returns {} values for {} outputs",
                                custom_name(eqn), jvp.outvars.size(), n));
  std::vector<Atom> outs = inline_jaxpr(b, jvp, {}, args);
  JvpFullResult r;
  r.primal_outs.assign(outs.begin(), outs.begin() + ptrdiff_t(n));
  r.tangent_outs.assign(outs.begin() + ptrdiff_t(n), outs.end());
  return r;
}

JvpFullResult custom_vjp_call_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                                  std::span<const Tangent> tangents) {
  Split s = split_consts(eqn, primals, tangents);
  const CustomVjpFwd* fwd = custom_rule<CustomVjpFwd>(eqn, "fwd");
  const ParamValue* bwd = eqn.params.find("bwd");
  if (!fwd || !bwd || !custom_rule<CustomVjpBwd>(eqn, "bwd"))
    ad::unsupported(fmt::format("jvp: custom_vjp_call '{}' has no fwd/bwd rules to differentiate "
                                "with (they were read from text)",
                                custom_name(eqn)),
                    eqn);
  auto perturbed = std::make_unique<bool[]>(s.primals.size());
  for (size_t i = 0; i < s.primals.size(); ++i) perturbed[i] = s.tangents[i].has_value();
  const CustomVjpFwd::Traced traced =
      fwd->fwd_jaxpr(avals_of(s.primals), std::span<const bool>(perturbed.get(), s.primals.size()));
  const size_t n = eqn.outputs.size();
  if (traced.jaxpr.outvars.size() != n + traced.num_res)
    throw TypeError(fmt::format("custom_vjp '{}': fwd returns {} outputs, the function {}",
                                custom_name(eqn), traced.jaxpr.outvars.size() - traced.num_res, n));
  std::vector<Atom> outs = inline_jaxpr(b, traced.jaxpr, {}, s.primals);
  std::vector<Atom> lin_in(outs.begin() + ptrdiff_t(n), outs.end());  // residuals
  ParamList in_zeros;
  for (const Tangent& t : s.tangents) {
    in_zeros.items.emplace_back(!t.has_value());
    if (t) lin_in.push_back(*t);
  }
  std::vector<ShapedArray> out_avals;
  for (const Var& v : eqn.outputs) out_avals.push_back(v.aval());
  // A batched fwd's residuals go with their own, batched bwd.
  const ParamValue bwd_param = traced.bwd ? ParamValue(ObjectRef(traced.bwd)) : *bwd;
  Params p{{"bwd", bwd_param},
           {"in_zeros", std::move(in_zeros)},
           {"num_res", int64_t(traced.num_res)},
           {"symbolic_zeros", custom_symbolic_zeros(eqn)},
           {"out_avals", lax_params::avals(out_avals)}};
  std::vector<Var> lin = b.emit("custom_lin", std::move(lin_in), std::move(p));
  JvpFullResult r;
  r.primal_outs.assign(outs.begin(), outs.begin() + ptrdiff_t(n));
  r.tangent_outs.assign(lin.begin(), lin.end());
  return r;
}

// The user's bwd on the residuals and the output cotangents (zeros instantiated); the
// cotangents of the tangents that were nonzero.
std::vector<Cotangent> custom_lin_transpose(const TransposeRuleArgs& a) {
  const CustomVjpBwd* bwd = custom_rule<CustomVjpBwd>(a.eqn, "bwd");
  if (!bwd) ad::unsupported("transpose: custom_lin has no bwd rule (read from text)", a.eqn);
  const auto num_res = static_cast<size_t>(a.eqn.params.get_int("num_res"));
  std::vector<Atom> args;
  std::vector<ShapedArray> res_avals, ct_avals;
  for (size_t i = 0; i < num_res; ++i) {
    if (a.args[i].linear)
      ad::unsupported("transpose: custom_lin's residuals must not be linear", a.eqn);
    args.push_back(a.args[i].value);
    res_avals.push_back(a.args[i].aval());
  }
  // With symbolic_zeros bwd is told which output cotangents are zero; otherwise it gets zeros.
  const bool symbolic = custom_symbolic_zeros(a.eqn);
  auto zero_cts = std::make_unique<bool[]>(a.cts.size());
  for (size_t k = 0; k < a.cts.size(); ++k) {
    const ShapedArray& aval = a.eqn.outputs[k].aval();
    zero_cts[k] = symbolic && !a.cts[k];
    if (a.cts[k])
      args.push_back(*a.cts[k]);
    else if (!symbolic)
      args.push_back(zeros_like_aval(a.b, aval));
    ct_avals.push_back(aval);
  }
  const Jaxpr j =
      bwd->bwd_jaxpr(res_avals, ct_avals, std::span<const bool>(zero_cts.get(), a.cts.size()));
  std::vector<Atom> in_cts = inline_jaxpr(a.b, j, {}, args);
  // One cotangent per primal operand of the custom_vjp function; those with a tangent here are
  // this eqn's linear operands, in order.
  const std::vector<ParamValue>& zeros = a.eqn.params.at("in_zeros").as<ParamList>().items;
  if (in_cts.size() != zeros.size())
    throw TypeError(fmt::format("custom_vjp: bwd returns {} cotangents for {} primal inputs",
                                in_cts.size(), zeros.size()));
  std::vector<Cotangent> cts(a.args.size());
  size_t next = num_res;
  for (size_t i = 0; i < zeros.size(); ++i) {
    if (zeros[i].as<bool>()) continue;
    const ShapedArray& want = a.args[next].aval();
    const ShapedArray& got = in_cts[i].aval();
    if (got.shape != want.shape || got.dtype != want.dtype)
      throw TypeError(fmt::format(
          "Custom VJP bwd rule must produce an output with the same shape/dtypes as the args "
          "tuple of the primal function. At output {} the bwd rule {} produced an output of "
          "shape/dtype {} corresponding to an input of shape/dtype {}",
          i, bwd->repr(), got.str_short(), want.str_short()));
    cts[next++] = in_cts[i];
  }
  return cts;
}

}  // namespace

void register_custom_ad_rules() {
  define_pass_rules("custom_jvp_call").jvp_full = custom_jvp_call_jvp;
  define_pass_rules("custom_vjp_call").jvp_full = custom_vjp_call_jvp;
  define_pass_rules("custom_lin").transpose = custom_lin_transpose;
}

}  // namespace cjax
