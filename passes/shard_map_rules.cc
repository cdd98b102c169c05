// Autodiff rules of `shard_map` eqns (jax/_src/shard_map.py with check_vma=False):
//
//   jvp            a shard_map of the jvp'd body; each tangent has its primal's spec.
//   partial eval   a known shard_map (known outputs and residuals) and a staged one. A residual
//                  is one device's value: it leaves the known shard_map split along its leading
//                  dimension over every mesh axis (a scalar promoted to shape [1]), so the staged
//                  one gets each device's back; residuals that are inputs are forwarded with
//                  their spec.
//   batching       the batch axis in front, not split (a leading None in the specs).
//   transpose      a shard_map of the transposed body. An output whose spec leaves out mesh axes
//                  is one value seen by every device of them, so each device's cotangent is
//                  divided by their size; a cotangent of an input whose spec leaves out axes is
//                  psum-ed over them (the devices' contributions to one value).
#include "passes/shard_map_rules.h"

#include <unordered_map>

#include "ir/primitive.h"
#include "ir/sharding.h"
#include "passes/batching.h"
#include "passes/builder.h"
#include "passes/call_rules.h"
#include "passes/dce.h"
#include "passes/inline.h"
#include "passes/jvp.h"
#include "passes/lax/collectives.h"
#include "passes/lax/structural.h"
#include "passes/partial_eval.h"
#include "passes/primitive_rules.h"
#include "passes/remat.h"
#include "passes/transpose.h"
#include "passes/util.h"

namespace cjax {
namespace {

std::vector<PartitionSpec> in_specs_of(const Eqn& e) {
  return specs_from_param(e.params.at("in_specs"), "in_specs");
}
std::vector<PartitionSpec> out_specs_of(const Eqn& e) {
  return specs_from_param(e.params.at("out_specs"), "out_specs");
}

// `like`'s params with a new body and specs.
Params with_body(const Eqn& like, Jaxpr body, const std::vector<PartitionSpec>& ins,
                 const std::vector<PartitionSpec>& outs) {
  Params p = with_jaxpr(like.params, std::move(body));
  p.set("in_specs", specs_param(ins));
  p.set("out_specs", specs_param(outs));
  return p;
}

// A shard_map eqn like `like` over `inputs`; its outputs typed by the shape rule.
Eqn shard_map_eqn(const Eqn& like, std::vector<Atom> inputs, Jaxpr body,
                  const std::vector<PartitionSpec>& ins, const std::vector<PartitionSpec>& outs) {
  JaxprBuilder b;
  b.set_source(like.source);
  b.emit(*like.prim, std::move(inputs), with_body(like, std::move(body), ins, outs));
  return std::move(b.eqns().back());
}

// The mesh axes a spec leaves out, in mesh order, and the product of their sizes.
std::vector<std::string> unmentioned(const MeshAxes& mesh, const PartitionSpec& spec) {
  const std::vector<std::string> named = spec.axes();
  std::vector<std::string> out;
  for (const std::string& a : mesh.names)
    if (std::find(named.begin(), named.end(), a) == named.end()) out.push_back(a);
  return out;
}
int64_t size_of(const MeshAxes& mesh, const std::vector<std::string>& axes) {
  int64_t n = 1;
  for (const std::string& a : axes) n *= mesh.sizes[*mesh.find(a)];
  return n;
}

// A residual leaves a shard_map split along its leading dimension over every mesh axis (one block
// per device); a scalar travels as shape [1].
PartitionSpec residual_spec(const MeshAxes& mesh) {
  return PartitionSpec{{mesh.names}};
}
Atom send_residual(JaxprBuilder& b, const Atom& r) {
  return r.aval().rank() == 0 ? lax_ops::reshape(b, r, Shape{1}) : r;
}
// A new invar of the receiving body for a residual that is `local` on each device, and the value
// the body reads.
Atom receive_residual(JaxprBuilder& b, const ShapedArray& local, std::vector<Var>& invars) {
  if (local.rank() != 0) return invars.emplace_back(local);
  invars.emplace_back(ShapedArray(local.dtype, {1}));
  return lax_ops::reshape(b, invars.back(), Shape{});
}
// `j` inlined into `b` on fresh invars, appended to `invars`; its outputs.
std::vector<Atom> inline_on_fresh_invars(JaxprBuilder& b, const Jaxpr& j,
                                         std::vector<Var>& invars) {
  std::vector<Atom> args;
  for (const Var& v : j.invars) args.push_back(invars.emplace_back(v.aval()));
  return inline_jaxpr(b, j, {}, args);
}

JvpFullResult shard_map_jvp(JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
                            std::span<const Tangent> tangents) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  const std::vector<PartitionSpec> in_specs = in_specs_of(eqn), out_specs = out_specs_of(eqn);
  std::vector<bool> nonzero;
  std::vector<Atom> inputs(primals.begin(), primals.end());
  std::vector<PartitionSpec> ins = in_specs, outs = out_specs;
  for (size_t i = 0; i < tangents.size(); ++i) {
    nonzero.push_back(tangents[i].has_value());
    if (!tangents[i]) continue;
    inputs.push_back(*tangents[i]);
    ins.push_back(in_specs[i]);
  }
  JvpJaxpr jvp = jvp_jaxpr(body, nonzero, /*instantiate=*/false);
  for (size_t i = 0; i < jvp.out_nonzero.size(); ++i)
    if (jvp.out_nonzero[i]) outs.push_back(out_specs[i]);
  return split_jvp_outputs(
      b.emit(*eqn.prim, std::move(inputs), with_body(eqn, std::move(jvp.jaxpr), ins, outs)),
      jvp.out_nonzero);
}

PartialEvalRuleResult shard_map_partial_eval(const Eqn& eqn, const std::vector<bool>& in_unknown) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  const MeshAxes mesh = mesh_from_param(eqn.params.at("mesh"));
  const std::vector<PartitionSpec> in_specs = in_specs_of(eqn), out_specs = out_specs_of(eqn);
  PartialEvalResult pe =
      partial_eval(body, in_unknown, std::vector<bool>(body.outvars.size(), false),
                   /*constants_as_residuals=*/true);
  std::unordered_map<Var, size_t, VarHash> input_index;
  for (size_t i = 0; i < body.invars.size(); ++i) input_index.emplace(body.invars[i], i);
  const size_t n_known_out = pe.known.outvars.size() - pe.residuals.size();

  // The known shard_map: its known outputs, then the residuals that are not inputs.
  JaxprBuilder kb;
  std::vector<Var> known_in;
  const std::vector<Atom> known_res = inline_on_fresh_invars(kb, pe.known, known_in);
  std::vector<Atom> known_outs(known_res.begin(),
                               known_res.begin() + static_cast<std::ptrdiff_t>(n_known_out));
  std::vector<PartitionSpec> known_out_specs = select(out_specs, pe.out_unknown, false);
  for (size_t i = 0; i < pe.residuals.size(); ++i) {
    if (input_index.count(pe.residuals[i])) continue;
    known_outs.push_back(send_residual(kb, known_res[n_known_out + i]));
    known_out_specs.push_back(residual_spec(mesh));
  }
  Eqn k = shard_map_eqn(eqn, select(eqn.inputs, in_unknown, false), kb.build(known_in, known_outs),
                        select(in_specs, in_unknown, false), known_out_specs);
  const std::vector<Var> k_outs = k.outputs;

  // The staged shard_map: (residuals..., unknown inputs...); an input that is a residual is
  // forwarded with its spec.
  JaxprBuilder sb;
  std::vector<Var> staged_in;
  std::vector<Atom> staged_args, staged_operands;
  std::vector<PartitionSpec> staged_in_specs;
  auto forward_input = [&](size_t i) {
    staged_args.push_back(staged_in.emplace_back(body.invars[i].aval()));
    staged_operands.push_back(eqn.inputs[i]);
    staged_in_specs.push_back(in_specs[i]);
  };
  size_t next_res = n_known_out;
  for (const Var& r : pe.residuals) {
    if (auto it = input_index.find(r); it != input_index.end()) {
      forward_input(it->second);
      continue;
    }
    staged_args.push_back(receive_residual(sb, r.aval(), staged_in));
    staged_operands.push_back(k_outs[next_res++]);
    staged_in_specs.push_back(residual_spec(mesh));
  }
  for (size_t i = 0; i < body.invars.size(); ++i)
    if (in_unknown[i]) forward_input(i);
  const std::vector<Atom> staged_outs = inline_jaxpr(sb, pe.staged, {}, staged_args);
  Eqn s = shard_map_eqn(eqn, std::move(staged_operands), sb.build(staged_in, staged_outs),
                        staged_in_specs, select(out_specs, pe.out_unknown));

  PartialEvalRuleResult out;
  out.out_unknown = pe.out_unknown;
  out.outputs = merge_outputs(
      pe.out_unknown,
      std::vector<Var>(k_outs.begin(), k_outs.begin() + static_cast<std::ptrdiff_t>(n_known_out)),
      s.outputs);
  if (!k.outputs.empty()) out.known_eqns.push_back(std::move(k));  // else it computes nothing
  out.staged_eqn = std::move(s);
  return out;
}

std::vector<Cotangent> shard_map_transpose(const TransposeRuleArgs& a) {
  const Jaxpr& body = *a.eqn.params.get_jaxpr("jaxpr");
  const MeshAxes mesh = mesh_from_param(a.eqn.params.at("mesh"));
  const std::vector<PartitionSpec> in_specs = in_specs_of(a.eqn), out_specs = out_specs_of(a.eqn);
  std::vector<bool> nonzero_ct, linear;
  for (const Cotangent& c : a.cts) nonzero_ct.push_back(c.has_value());
  std::vector<Atom> operands;
  std::vector<PartitionSpec> ins;
  for (size_t i = 0; i < a.args.size(); ++i) {
    linear.push_back(a.args[i].linear);
    if (a.args[i].linear) continue;
    operands.push_back(a.args[i].value);
    ins.push_back(in_specs[i]);
  }
  std::vector<bool> zero;
  const Jaxpr t = transpose_jaxpr(dce(body, nonzero_ct).jaxpr, linear, &zero);

  // The transposed body: cotangents of outputs shared across unmentioned axes divided among
  // their devices; cotangents of inputs shared across unmentioned axes psum-ed over them.
  JaxprBuilder b;
  b.set_source(a.eqn.source);
  std::vector<Var> invars;
  std::vector<Atom> args;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!a.args[i].linear) {
      invars.emplace_back(body.invars[i].aval());
      args.push_back(invars.back());
    }
  for (size_t o = 0; o < a.cts.size(); ++o) {
    if (!a.cts[o]) continue;
    invars.emplace_back(body.outvars[o].aval());
    Atom ct = invars.back();
    const int64_t n = size_of(mesh, unmentioned(mesh, out_specs[o]));
    if (n != 1) ct = b.emit1("div", {ct, Literal::of(double(n), ct.aval().dtype, true)});
    args.push_back(ct);
    operands.push_back(*a.cts[o]);
    ins.push_back(out_specs[o]);
  }
  const std::vector<Atom> linear_cts = inline_jaxpr(b, t, {}, args);
  std::vector<Atom> outs;
  std::vector<PartitionSpec> out_of_t;
  for (size_t i = 0, l = 0; i < a.args.size(); ++i) {
    if (!a.args[i].linear) continue;
    const size_t k = l++;
    if (zero[k]) continue;
    Atom ct = linear_cts[k];
    const std::vector<std::string> shared = unmentioned(mesh, in_specs[i]);
    if (!shared.empty())
      ct = lax_ops::all_reduce(b, "psum", {ct}, lax_ops::collective_axes(shared))[0];
    outs.push_back(ct);
    out_of_t.push_back(in_specs[i]);
  }
  std::vector<Cotangent> cts(a.args.size());
  if (outs.empty()) return cts;
  std::vector<Var> results = a.b.emit(*a.eqn.prim, std::move(operands),
                                      with_body(a.eqn, b.build(invars, outs), ins, out_of_t));
  for (size_t i = 0, l = 0, next = 0; i < a.args.size(); ++i) {
    if (!a.args[i].linear) continue;
    if (!zero[l++]) cts[i] = Cotangent(results[next++]);
  }
  return cts;
}

// Under a checkpoint policy (JAX's _shard_map_partial_eval_custom): the body split by the policy,
// both halves shard_maps, residuals passed between them as partial eval's are.
CustomRuleResult shard_map_partial_eval_custom(const Eqn& eqn, const std::vector<bool>& unks_in,
                                               const std::vector<bool>& inst_in,
                                               const PolicyRef& policy) {
  const Jaxpr& body = *eqn.params.get_jaxpr("jaxpr");
  const MeshAxes mesh = mesh_from_param(eqn.params.at("mesh"));
  const std::vector<PartitionSpec> in_specs = in_specs_of(eqn), out_specs = out_specs_of(eqn);
  std::vector<bool> no(body.outvars.size(), false);
  CustomPartialEval pe = partial_eval_jaxpr_custom(body, unks_in, inst_in, no, no, policy);
  const size_t n_known_out = pe.known.outvars.size() - pe.num_residuals;

  JaxprBuilder kb;
  std::vector<Var> known_in;
  const std::vector<Atom> known_res = inline_on_fresh_invars(kb, pe.known, known_in);
  std::vector<Atom> known_outs(known_res.begin(),
                               known_res.begin() + static_cast<std::ptrdiff_t>(n_known_out));
  std::vector<Var> residuals;  // the known shard_map's residual outputs, whole
  for (size_t i = 0; i < pe.num_residuals; ++i) {
    const Atom r = send_residual(kb, known_res[n_known_out + i]);
    Shape whole = r.aval().shape;
    whole[0] *= mesh.device_count();
    residuals.emplace_back(ShapedArray(r.aval().dtype, whole));
    known_outs.push_back(r);
  }
  std::vector<PartitionSpec> known_out_specs = select(out_specs, pe.out_unknown, false);
  known_out_specs.insert(known_out_specs.end(), pe.num_residuals, residual_spec(mesh));
  Eqn known{eqn.prim,
            {},
            {},
            with_body(eqn, kb.build(known_in, known_outs), select(in_specs, unks_in, false),
                      known_out_specs),
            eqn.source};
  known.inputs = select(eqn.inputs, unks_in, false);
  known.outputs = select(eqn.outputs, pe.out_unknown, false);
  known.outputs.insert(known.outputs.end(), residuals.begin(), residuals.end());

  JaxprBuilder sb;
  std::vector<Var> staged_in;
  std::vector<Atom> staged_args;
  for (size_t i = 0; i < pe.staged.invars.size(); ++i)
    staged_args.push_back(i < pe.num_residuals
                              ? receive_residual(sb, pe.staged.invars[i].aval(), staged_in)
                              : Atom(staged_in.emplace_back(pe.staged.invars[i].aval())));
  std::vector<PartitionSpec> staged_in_specs(pe.num_residuals, residual_spec(mesh));
  for (const PartitionSpec& p : select(in_specs, inst_in)) staged_in_specs.push_back(p);
  const std::vector<Atom> staged_outs = inline_jaxpr(sb, pe.staged, {}, staged_args);
  Eqn staged{eqn.prim,
             {},
             {},
             with_body(eqn, sb.build(staged_in, staged_outs), staged_in_specs,
                       select(out_specs, pe.out_inst)),
             eqn.source};
  staged.inputs.assign(residuals.begin(), residuals.end());
  for (const Atom& a : select(eqn.inputs, inst_in)) staged.inputs.push_back(a);
  staged.outputs = select(eqn.outputs, pe.out_inst);

  CustomRuleResult r;
  r.unks_out = pe.out_unknown;
  r.inst_out = pe.out_inst;
  for (size_t i = 0; i < eqn.inputs.size(); ++i)
    if (eqn.inputs[i].is_var() && !inst_in[i]) r.residuals.push_back(eqn.inputs[i].var());
  r.residuals.insert(r.residuals.end(), residuals.begin(), residuals.end());
  r.known_eqns.push_back(std::move(known));
  r.staged_eqns.push_back(std::move(staged));
  return r;
}

// vmap (JAX's _shard_map_batch): the batch axis, moved to the front of every batched operand, is
// not split (its specs get a leading None), and the body is batched along it.
BatchedOutputs shard_map_batch(const BatchRuleArgs& a) {
  const Jaxpr& body = *a.eqn.params.get_jaxpr("jaxpr");
  std::vector<PartitionSpec> ins = in_specs_of(a.eqn), outs = out_specs_of(a.eqn);
  auto unsplit_front = [](PartitionSpec& spec) {
    spec.dims.insert(spec.dims.begin(), std::vector<std::string>{});
  };
  std::vector<Atom> operands;
  std::vector<BatchDim> dims;
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (!a.dims[i]) {
      operands.push_back(a.args[i]);
      dims.push_back(std::nullopt);
      continue;
    }
    operands.push_back(batching::moveaxis(a.b, a.args[i], *a.dims[i], 0));
    dims.push_back(0);
    unsplit_front(ins[i]);
  }
  BatchedJaxpr batched =
      batch_jaxpr(body, dims, a.axis, std::vector<BatchDim>{batching::kZeroIfMapped});
  for (size_t o = 0; o < outs.size(); ++o)
    if (batched.out_dims[o]) unsplit_front(outs[o]);
  std::vector<Atom> results = a.b.bind(*a.eqn.prim, std::move(operands),
                                       with_body(a.eqn, std::move(batched.jaxpr), ins, outs));
  return {results, batched.out_dims};
}

}  // namespace

void register_shard_map_rules() {
  PassRules& r = define_pass_rules("shard_map");
  r.jvp_full = shard_map_jvp;
  r.partial_eval = shard_map_partial_eval;
  r.transpose = shard_map_transpose;
  r.partial_eval_custom = shard_map_partial_eval_custom;
  r.batch = shard_map_batch;
}

}  // namespace cjax
