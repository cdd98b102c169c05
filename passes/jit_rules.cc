// Autodiff rules of `jit` eqns, as JAX's pjit rules: the jvp is a jit of the jvp'd body; partial
// evaluation splits it into a known jit (primal outputs and residuals; residuals that are just
// inputs are forwarded, not returned) and a staged jit; the transpose is a jit of the transposed
// body. Every new eqn keeps the call's name, so reports read "output of jitted function 'f'".
#include "passes/jit_rules.h"

#include <unordered_map>

#include "ir/primitive.h"
#include "passes/call_rules.h"
#include "passes/dce.h"
#include "passes/jvp.h"
#include "passes/partial_eval.h"
#include "passes/primitive_rules.h"
#include "passes/transpose.h"
#include "passes/util.h"

namespace cjax {
namespace {

PartialEvalRuleResult jit_partial_eval(const Eqn& eqn, const std::vector<bool>& in_unknown) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  PartialEvalResult pe =
      partial_eval(body, in_unknown, std::vector<bool>(body.outvars.size(), false),
                   /*constants_as_residuals=*/true);

  // Residuals that are inputs of the body are forwarded from the eqn's own inputs.
  std::unordered_map<Var, Atom, VarHash> input_of;
  for (size_t i = 0; i < body.invars.size(); ++i) input_of.emplace(body.invars[i], eqn.inputs[i]);
  size_t n_known_out = pe.known.outvars.size() - pe.residuals.size();
  Jaxpr known = pe.known;
  known.outvars.erase(known.outvars.begin() + static_cast<std::ptrdiff_t>(n_known_out),
                      known.outvars.end());
  for (size_t i = 0; i < pe.residuals.size(); ++i)
    if (!input_of.count(pe.residuals[i]))
      known.outvars.push_back(pe.known.outvars[n_known_out + i]);

  PartialEvalRuleResult out;
  out.out_unknown = pe.out_unknown;
  Eqn k = call_eqn(eqn, select(eqn.inputs, in_unknown, false), std::move(known));
  std::vector<Var> known_outs = k.outputs;
  out.known_eqns.push_back(std::move(k));

  std::vector<Atom> staged_in;
  size_t next_res = n_known_out;
  for (const Var& r : pe.residuals) {
    auto fwd = input_of.find(r);
    staged_in.push_back(fwd != input_of.end() ? fwd->second : Atom(known_outs[next_res++]));
  }
  for (const Atom& a : select(eqn.inputs, in_unknown)) staged_in.push_back(a);
  Eqn s = call_eqn(eqn, std::move(staged_in), std::move(pe.staged));
  out.outputs = merge_outputs(pe.out_unknown, known_outs, s.outputs);
  out.staged_eqn = std::move(s);
  return out;
}

}  // namespace

void register_jit_rules() {
  PassRules& r = define_pass_rules("jit");
  r.jvp_full = call_jvp;
  r.partial_eval = jit_partial_eval;
  r.transpose = call_transpose;
  r.partial_eval_custom = call_partial_eval_custom;
  r.dce = call_dce;
}

}  // namespace cjax
