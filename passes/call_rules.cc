#include "passes/call_rules.h"

#include "passes/dce.h"
#include "passes/util.h"

namespace cjax {

JvpFullResult call_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                       std::span<const Tangent> tangents) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  std::vector<bool> nonzero;
  std::vector<Atom> inputs(primals.begin(), primals.end());
  for (const Tangent& t : tangents) {
    nonzero.push_back(t.has_value());
    if (t) inputs.push_back(*t);
  }
  JvpJaxpr jvp = jvp_jaxpr(body, nonzero, /*instantiate=*/false);
  return split_jvp_outputs(
      b.emit(*eqn.prim, std::move(inputs), with_jaxpr(eqn.params, std::move(jvp.jaxpr))),
      jvp.out_nonzero);
}

JvpFullResult split_jvp_outputs(const std::vector<Var>& outs,
                                const std::vector<bool>& out_nonzero) {
  JvpFullResult r;
  size_t n = out_nonzero.size(), next = n;
  for (size_t i = 0; i < n; ++i) {
    r.primal_outs.push_back(outs[i]);
    r.tangent_outs.push_back(out_nonzero[i] ? Tangent(outs[next++]) : Tangent());
  }
  return r;
}

std::vector<Cotangent> call_transpose(const TransposeRuleArgs& a) {
  const Jaxpr& body = *a.eqn.params.get_jaxpr("jaxpr");
  std::vector<bool> nonzero_ct, linear;
  for (const Cotangent& c : a.cts) nonzero_ct.push_back(c.has_value());
  std::vector<Atom> inputs;
  for (const TransposeArg& arg : a.args) {
    linear.push_back(arg.linear);
    if (!arg.linear) inputs.push_back(arg.value);
  }
  for (const Cotangent& c : a.cts)
    if (c) inputs.push_back(*c);
  // As JAX's transpose_jaxpr: cotangents that are zero are not returned by the new call.
  std::vector<bool> zero;
  Jaxpr t = transpose_jaxpr(dce(body, nonzero_ct).jaxpr, linear, &zero);
  std::vector<bool> keep;
  for (bool z : zero) keep.push_back(!z);
  t.outvars = select(t.outvars, keep);
  t = dce(t);
  std::vector<Var> outs =
      a.b.emit(*a.eqn.prim, std::move(inputs), with_jaxpr(a.eqn.params, std::move(t)));
  std::vector<Cotangent> cts;
  size_t next_linear = 0, next_out = 0;
  for (const TransposeArg& arg : a.args) {
    if (!arg.linear) {
      cts.emplace_back();
      continue;
    }
    cts.push_back(keep[next_linear++] ? Cotangent(outs[next_out++]) : Cotangent());
  }
  return cts;
}

}  // namespace cjax
