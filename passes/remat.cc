#include "passes/remat.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "ir/rules/registry.h"
#include "passes/call_rules.h"
#include "passes/dce.h"
#include "passes/inline.h"
#include "passes/jvp.h"
#include "passes/memory/budget_plan.h"
#include "passes/partial_eval.h"
#include "passes/policies.h"
#include "passes/primitive_rules.h"
#include "passes/rules.h"
#include "passes/transpose.h"
#include "passes/util.h"

namespace cjax {
namespace {

// Insertion-ordered set of residual vars.
class ResidualSet {
 public:
  void add(const Var& v) {
    if (seen_.insert(v).second) order_.push_back(v);
  }
  const std::vector<Var>& vars() const { return order_; }

 private:
  std::unordered_set<Var, VarHash> seen_;
  std::vector<Var> order_;
};

struct Flags {
  bool unknown;
  bool inst;  // available on the staged side
};

PolicyRef policy_of(const Eqn& eqn) {
  const ParamValue* p = eqn.params.find("policy");
  return p && p->is<PolicyRef>() ? p->as<PolicyRef>() : nullptr;
}

Params device_put_params(const std::string& memory_kind, size_t n) {
  ParamTuple devices, srcs, semantics;
  for (size_t i = 0; i < n; ++i) {
    devices.items.emplace_back(memory_kind);
    srcs.items.emplace_back(NoneParam{});
    semantics.items.emplace_back(OpaqueParam{"ArrayCopySemantics.ALWAYS_COPY"});
  }
  return {{"devices", devices}, {"srcs", srcs}, {"copy_semantics", semantics}};
}

// Values computed from PRNG keys alone (keys, the random bits and masks drawn from them, and
// what those compute with literals and integer scalars such as a step number). Inside a
// checkpoint they are recomputed in the backward pass whatever the policy says: a few integer
// ops per element cost less than keeping a mask alive between the passes (JAX saves dropout
// masks under everything_saveable; jax#17982).
class KeyDerived {
 public:
  explicit KeyDerived(const Jaxpr& jaxpr) {
    for (const Var& v : jaxpr.invars)
      if (v.aval().dtype == DType::key_fry) vars_.insert(v);
    for (const Var& v : jaxpr.constvars)
      if (v.aval().dtype == DType::key_fry) vars_.insert(v);
  }
  // Whether the eqn's outputs are computed from keys: it makes keys from words, or it reads a
  // key-derived value and otherwise only literals and integer scalars. Records its outputs.
  bool take(const Eqn& eqn) {
    const std::string& name = eqn.prim->name;
    const bool makes_keys = name == "random_seed" || name == "random_wrap";
    bool reads_keys = false;
    for (const Atom& a : eqn.inputs) {
      if (a.is_literal()) continue;
      if (vars_.count(a.var())) {
        reads_keys = true;
        continue;
      }
      const ShapedArray& aval = a.var().aval();
      if (!makes_keys && !(aval.rank() == 0 && is_integer(aval.dtype))) return false;
    }
    if (!(reads_keys || makes_keys) || eqn.outputs.empty()) return false;
    for (const Var& o : eqn.outputs) vars_.insert(o);
    return true;
  }

 private:
  std::unordered_set<Var, VarHash> vars_;
};

}  // namespace

CustomRuleResult call_partial_eval_custom(const Eqn& eqn, const std::vector<bool>& unks_in,
                                          const std::vector<bool>& inst_in,
                                          const PolicyRef& policy) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  std::vector<bool> no(body.outvars.size(), false);
  CustomPartialEval pe = partial_eval_jaxpr_custom(body, unks_in, inst_in, no, no, policy);
  CustomRuleResult r;
  r.unks_out = pe.out_unknown;
  r.inst_out = pe.out_inst;
  std::vector<Var> residuals;
  for (size_t i = 0; i < pe.num_residuals; ++i) residuals.emplace_back(pe.staged.invars[i].aval());
  Eqn known{eqn.prim, {}, {}, with_jaxpr(eqn.params, std::move(pe.known)), eqn.source};
  known.inputs = select(eqn.inputs, unks_in, false);
  known.outputs = select(eqn.outputs, pe.out_unknown, false);
  known.outputs.insert(known.outputs.end(), residuals.begin(), residuals.end());
  Eqn staged{eqn.prim, {}, {}, with_jaxpr(eqn.params, std::move(pe.staged)), eqn.source};
  staged.inputs.assign(residuals.begin(), residuals.end());
  for (const Atom& a : select(eqn.inputs, inst_in)) staged.inputs.push_back(a);
  staged.outputs = select(eqn.outputs, pe.out_inst);
  if (eqn.prim->name == "remat2") staged.params.set("differentiated", true);
  for (size_t i = 0; i < eqn.inputs.size(); ++i)
    if (eqn.inputs[i].is_var() && !inst_in[i]) r.residuals.push_back(eqn.inputs[i].var());
  r.residuals.insert(r.residuals.end(), residuals.begin(), residuals.end());
  r.known_eqns.push_back(std::move(known));
  r.staged_eqns.push_back(std::move(staged));
  return r;
}

CustomPartialEval partial_eval_jaxpr_custom(const Jaxpr& jaxpr, const std::vector<bool>& in_unknown,
                                            const std::vector<bool>& in_inst,
                                            const std::vector<bool>& ensure_out_unknown,
                                            const std::vector<bool>& ensure_out_inst,
                                            const PolicyRef& policy) {
  std::unordered_map<Var, Flags, VarHash> env;
  ResidualSet residuals;
  std::vector<Eqn> known_eqns, staged_eqns;
  auto read = [&](const Atom& a) -> Flags {
    if (a.is_literal()) return {false, true};
    auto it = env.find(a.var());
    if (it == env.end())
      throw VerifyError("partial_eval_jaxpr_custom: variable read before it is defined");
    return it->second;
  };
  auto write = [&](const Var& v, Flags f) { env[v] = f; };
  auto ensure_instantiated = [&](const Atom& a, bool inst) {
    if (a.is_var() && !inst) residuals.add(a.var());
  };

  for (size_t i = 0; i < jaxpr.invars.size(); ++i)
    write(jaxpr.invars[i], {in_unknown[i], in_inst[i]});
  for (const Var& c : jaxpr.constvars) write(c, {false, true});
  KeyDerived from_keys(jaxpr);

  for (size_t k = 0; k < jaxpr.eqns.size(); ++k) {
    const Eqn& eqn = jaxpr.eqns[k];
    std::vector<bool> unks_in, inst_in;
    bool any_unknown = false;
    for (const Atom& in : eqn.inputs) {
      Flags f = read(in);
      unks_in.push_back(f.unknown);
      inst_in.push_back(f.inst);
      any_unknown |= f.unknown;
    }
    if (!any_unknown && from_keys.take(eqn)) {
      // Recomputed from its keys, whatever the policy: known, and copied to the staged side.
      known_eqns.push_back(eqn);
      for (size_t i = 0; i < eqn.inputs.size(); ++i) ensure_instantiated(eqn.inputs[i], inst_in[i]);
      staged_eqns.push_back(eqn);
      for (const Var& o : eqn.outputs) write(o, {false, true});
      continue;
    }
    if (const PartialEvalCustomRule& rule = pass_rules(*eqn.prim).partial_eval_custom) {
      CustomRuleResult s = rule(eqn, unks_in, inst_in, policy);
      for (Eqn& e : s.known_eqns) known_eqns.push_back(std::move(e));
      for (Eqn& e : s.staged_eqns) staged_eqns.push_back(std::move(e));
      for (const Var& r : s.residuals) residuals.add(r);
      for (size_t i = 0; i < eqn.outputs.size(); ++i)
        write(eqn.outputs[i], {s.unks_out[i], s.inst_out[i]});
      continue;
    }
    if (any_unknown) {
      for (size_t i = 0; i < eqn.inputs.size(); ++i) ensure_instantiated(eqn.inputs[i], inst_in[i]);
      staged_eqns.push_back(eqn);
      for (const Var& o : eqn.outputs) write(o, {true, true});
      continue;
    }
    known_eqns.push_back(eqn);
    std::vector<ShapedArray> avals = avals_of(std::span<const Atom>(eqn.inputs));
    PolicyDecision d = policies::decide(policy, *eqn.prim, avals, eqn.params);
    switch (d.kind) {
      case Saveability::save:
        for (const Var& o : eqn.outputs) write(o, {false, false});
        break;
      case Saveability::offload: {
        Eqn to_dst{&get_primitive("device_put"),
                   {},
                   {},
                   device_put_params(d.offload_dst, eqn.outputs.size()),
                   eqn.source};
        Eqn to_src{&get_primitive("device_put"),
                   {},
                   {},
                   device_put_params(d.offload_src, eqn.outputs.size()),
                   eqn.source};
        for (const Var& o : eqn.outputs) {
          Var moved(o.aval());
          to_dst.inputs.push_back(o);
          to_dst.outputs.push_back(moved);
          to_src.inputs.push_back(moved);
          to_src.outputs.push_back(o);
          write(moved, {false, true});
          residuals.add(moved);
          write(o, {false, true});
        }
        known_eqns.push_back(std::move(to_dst));
        staged_eqns.push_back(std::move(to_src));
        break;
      }
      case Saveability::recompute:
        for (size_t i = 0; i < eqn.inputs.size(); ++i)
          ensure_instantiated(eqn.inputs[i], inst_in[i]);
        staged_eqns.push_back(eqn);
        for (const Var& o : eqn.outputs) write(o, {false, true});
        break;
    }
  }

  CustomPartialEval r;
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    Flags f = read(jaxpr.outvars[i]);
    if (i < ensure_out_inst.size() && ensure_out_inst[i])
      ensure_instantiated(jaxpr.outvars[i], f.inst);
    r.out_unknown.push_back(f.unknown || (i < ensure_out_unknown.size() && ensure_out_unknown[i]));
    r.out_inst.push_back(f.inst || (i < ensure_out_inst.size() && ensure_out_inst[i]));
  }
  r.num_residuals = residuals.vars().size();

  r.known.constvars = jaxpr.constvars;
  r.known.consts = jaxpr.consts;
  r.known.invars = select(jaxpr.invars, in_unknown, false);
  r.known.eqns = std::move(known_eqns);
  r.known.outvars = select(jaxpr.outvars, r.out_unknown, false);
  for (const Var& v : residuals.vars()) r.known.outvars.push_back(v);

  r.staged.constvars = jaxpr.constvars;
  r.staged.consts = jaxpr.consts;
  r.staged.invars = residuals.vars();
  for (const Var& v : select(jaxpr.invars, in_inst)) r.staged.invars.push_back(v);
  r.staged.eqns = std::move(staged_eqns);
  r.staged.outvars = select(jaxpr.outvars, r.out_inst);
  return r;
}

Jaxpr insert_reduce_precision(const Jaxpr& known, size_t num_residuals) {
  std::unordered_set<Var, VarHash> read_by_eqns;
  for (const Eqn& e : known.eqns)
    for (const Atom& in : e.inputs)
      if (in.is_var()) read_by_eqns.insert(in.var());
  const Primitive& rp = get_primitive("reduce_precision");
  auto round_params = [](DType t) {  // finfo(dtype).nexp / .nmant
    int64_t exponent_bits = t == DType::f64 ? 11 : t == DType::f16 ? 5 : 8;
    int64_t mantissa_bits = t == DType::f64 ? 52 : t == DType::f16 ? 10 : t == DType::bf16 ? 7 : 23;
    return Params{{"exponent_bits", exponent_bits}, {"mantissa_bits", mantissa_bits}};
  };
  std::unordered_set<Var, VarHash> inputs(known.invars.begin(), known.invars.end());
  inputs.insert(known.constvars.begin(), known.constvars.end());

  // The floating residuals that another eqn also reads, with their residual position.
  std::unordered_map<Var, size_t, VarHash> to_round;
  std::vector<Var> input_residuals;
  for (size_t r = known.outvars.size() - num_residuals; r < known.outvars.size(); ++r) {
    const Atom& o = known.outvars[r];
    if (!o.is_var() || !is_floating(o.aval().dtype) || !read_by_eqns.count(o.var())) continue;
    if (!to_round.emplace(o.var(), r).second) continue;
    if (inputs.count(o.var())) input_residuals.push_back(o.var());
  }

  Jaxpr out = known;
  out.eqns.clear();
  out.eqns.reserve(known.eqns.size() + to_round.size());
  // A residual that is an input: rename the binder and recompute the value from it first thing
  // (JAX inserts each at the top, so the last one comes first).
  for (auto it = input_residuals.rbegin(); it != input_residuals.rend(); ++it) {
    Var fresh(it->aval());
    for (auto* list : {&out.invars, &out.constvars})
      for (Var& x : *list)
        if (x == *it) x = fresh;
    out.eqns.push_back(Eqn{&rp, {fresh}, {*it}, round_params(it->aval().dtype), {}});
  }
  // A residual produced by an eqn: the eqn writes a fresh var, and a reduce_precision right after
  // it produces the residual, so every reader sees the rounded value. JAX inserts each right
  // after the producer, so several from one eqn end up in reverse residual order.
  for (const Eqn& e : known.eqns) {
    Eqn copy = e;
    std::vector<std::pair<size_t, Eqn>> rounds;
    for (Var& o : copy.outputs) {
      auto it = to_round.find(o);
      if (it == to_round.end() || inputs.count(o)) continue;
      Params params = round_params(o.aval().dtype);
      if (e.prim == &rp && e.params == params) continue;  // already rounded
      Var residual = o, fresh(o.aval());
      o = fresh;
      rounds.emplace_back(it->second, Eqn{&rp, {fresh}, {residual}, std::move(params), e.source});
    }
    out.eqns.push_back(std::move(copy));
    std::sort(rounds.begin(), rounds.end(),
              [](const auto& x, const auto& y) { return x.first > y.first; });
    for (auto& [pos, round] : rounds) out.eqns.push_back(std::move(round));
  }
  return out;
}

Jaxpr checkpoint_jaxpr(const Jaxpr& jaxpr, const PolicyRef& policy, bool prevent_cse) {
  Jaxpr body = jaxpr;
  convert_constvars(body);
  body.debug = nullptr;
  // A memory budget is planned here, once (passes/memory/budget_plan.h).
  memory::CheckpointBody planned =
      memory::plan_checkpoint(std::move(body), policy, jaxpr.constvars.size());
  Jaxpr outer;
  outer.constvars = jaxpr.constvars;
  outer.consts = jaxpr.consts;
  outer.debug = jaxpr.debug;
  for (const Var& v : jaxpr.invars) outer.invars.emplace_back(v.aval());
  std::vector<Atom> inputs(outer.constvars.begin(), outer.constvars.end());
  inputs.insert(inputs.end(), outer.invars.begin(), outer.invars.end());
  Params params{{"differentiated", false},
                {"policy", planned.policy ? ParamValue(planned.policy) : ParamValue(NoneParam{})},
                {"prevent_cse", prevent_cse}};
  JaxprBuilder b;
  std::vector<Var> outs =
      b.emit("remat2", std::move(inputs), with_jaxpr(params, std::move(planned.body)));
  Jaxpr built = b.build(outer.invars, std::vector<Atom>(outs.begin(), outs.end()), outer.constvars,
                        outer.consts);
  built.debug = jaxpr.debug;
  return built;
}

namespace {

// The outer partial-eval rule: the known part of the checkpointed function runs in the forward
// program (inlined), the rest becomes a remat2 eqn marked differentiated. A memory budget's save
// set is applied here, where it is known which inputs are tangents: its values are named for the
// split and the names dropped right after (passes/memory/budget_plan.h).
PartialEvalRuleResult remat_partial_eval(const Eqn& eqn, const std::vector<bool>& in_unknown) {
  PolicyRef policy = policy_of(eqn);
  const std::optional<memory::NamedSaveSet> named =
      memory::apply_memory_budget(policy, *eqn.params.get_jaxpr("jaxpr"), in_unknown);
  const Jaxpr& body = named ? named->body : *eqn.params.get_jaxpr("jaxpr");
  if (named) policy = named->policy;
  size_t n_in = body.invars.size(), n_out = body.outvars.size();
  std::vector<bool> all(n_in, true), none(n_out, false);
  CustomPartialEval pe = partial_eval_jaxpr_custom(body, in_unknown, all, none, none, policy);
  if (named) {
    pe.known = memory::drop_save_set_names(std::move(pe.known));
    pe.staged = memory::drop_save_set_names(std::move(pe.staged));
  }

  // DCE the staged side down to its unknown outputs; keep the residuals it reads.
  std::vector<bool> staged_keep = select(pe.out_unknown, pe.out_inst);
  DceResult staged = dce(pe.staged, staged_keep);
  std::vector<bool> used_res(staged.used_inputs.begin(),
                             staged.used_inputs.begin() + pe.num_residuals);
  std::vector<bool> used_staged_in(staged.used_inputs.begin() + pe.num_residuals,
                                   staged.used_inputs.end());
  staged.jaxpr.invars = select(staged.jaxpr.invars, staged.used_inputs);

  size_t n_known_out = pe.known.outvars.size() - pe.num_residuals;
  std::vector<bool> known_keep(n_known_out, true);
  known_keep.insert(known_keep.end(), used_res.begin(), used_res.end());
  DceResult known = dce(pe.known, known_keep);
  std::vector<bool> used_known_in = known.used_inputs;
  known.jaxpr.invars = select(known.jaxpr.invars, used_known_in);
  size_t num_res = 0;
  for (bool u : used_res) num_res += u;
  Jaxpr known_jaxpr = insert_reduce_precision(known.jaxpr, num_res);

  // Inline the known part.
  JaxprBuilder b;
  std::vector<Atom> known_args = select(select(eqn.inputs, in_unknown, false), used_known_in);
  std::vector<Atom> known_outs = inline_jaxpr(b, known_jaxpr, {}, known_args);

  PartialEvalRuleResult r;
  r.known_eqns = std::move(b.eqns());
  r.out_unknown = pe.out_unknown;

  std::vector<Atom> staged_in(known_outs.begin() + static_cast<std::ptrdiff_t>(n_known_out),
                              known_outs.end());
  for (const Atom& a : select(eqn.inputs, used_staged_in)) staged_in.push_back(a);
  Eqn st = call_eqn(eqn, std::move(staged_in), std::move(staged.jaxpr));
  st.params.set("differentiated", true);
  if (named) st.params.set("policy", policy);  // the plan was for the body as a whole
  r.outputs = merge_outputs(pe.out_unknown, known_outs, st.outputs);
  r.staged_eqn = std::move(st);
  return r;
}

}  // namespace

void register_remat_rules() {
  PassRules& r = define_pass_rules("remat2");
  r.jvp_full = call_jvp;
  r.partial_eval = remat_partial_eval;
  r.transpose = call_transpose;
  r.partial_eval_custom = call_partial_eval_custom;
  r.dce = call_dce;
}

}  // namespace cjax
