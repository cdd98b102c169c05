#include "passes/control_flow/cf_util.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "ir/rules/registry.h"
#include "passes/lax/lax.h"

namespace cjax::cf {

std::vector<bool> bool_or(const std::vector<bool>& a, const std::vector<bool>& b) {
  std::vector<bool> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] || (i < b.size() && b[i]);
  return out;
}

bool bool_leq(const std::vector<bool>& a, const std::vector<bool>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] && !(i < b.size() && b[i])) return false;
  return true;
}

size_t count(const std::vector<bool>& xs) {
  size_t n = 0;
  for (bool x : xs) n += x;
  return n;
}

const Jaxpr& body_param(const Eqn& eqn, std::string_view key) {
  const JaxprRef& j = eqn.params.get_jaxpr(key);
  if (!j) throw Error(fmt::format("{}: param '{}' holds no jaxpr", eqn.prim->name, key));
  if (!j->constvars.empty())
    throw UnsupportedError(fmt::format(
        "{}: the {} has constvars; control-flow bodies must take their constants as inputs",
        eqn.prim->name, key));
  return *j;
}

std::vector<const Jaxpr*> branches_param(const Eqn& eqn) {
  const ParamValue& v = eqn.params.at("branches");
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  if (!items || items->empty()) throw Error("cond: 'branches' must be a non-empty tuple of jaxprs");
  std::vector<const Jaxpr*> out;
  for (const ParamValue& b : *items) {
    if (!b.is<JaxprRef>() || !b.as<JaxprRef>()) throw Error("cond: a branch is not a jaxpr");
    if (!b.as<JaxprRef>()->constvars.empty())
      throw UnsupportedError("cond: a branch has constvars; branches must take them as operands");
    out.push_back(b.as<JaxprRef>().get());
  }
  return out;
}

Jaxpr fresh_copy(const Jaxpr& j) {
  std::unordered_map<Var, Var, VarHash> env;
  auto bind = [&](const Var& v) {
    Var fresh = v.is_drop() ? Var::drop(v.aval()) : Var(v.aval());
    env[v] = fresh;
    return fresh;
  };
  auto read = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = env.find(a.var());
    return it == env.end() ? a : Atom(it->second);
  };
  Jaxpr out;
  out.consts = j.consts;
  out.debug = j.debug;
  for (const Var& v : j.constvars) out.constvars.push_back(bind(v));
  for (const Var& v : j.invars) out.invars.push_back(bind(v));
  for (const Eqn& e : j.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = read(in);
    for (Var& o : copy.outputs) o = bind(o);
    out.eqns.push_back(std::move(copy));
  }
  for (const Atom& o : j.outvars) out.outvars.push_back(read(o));
  return out;
}

Params with_branches(const Params& params, std::vector<Jaxpr> branches) {
  ParamTuple t;
  for (Jaxpr& j : branches) t.items.emplace_back(std::make_shared<const Jaxpr>(fresh_copy(j)));
  Params out = params;
  out.set("branches", std::move(t));
  return out;
}

Params scan_params(const Params& params, Jaxpr body, int64_t num_consts, int64_t num_carry,
                   std::optional<bool> reverse) {
  Params out = params;
  size_t n_in = body.invars.size();
  out.set("jaxpr", JaxprRef(std::make_shared<const Jaxpr>(fresh_copy(body))));
  out.set("num_consts", num_consts);
  out.set("num_carry", num_carry);
  if (reverse) out.set("reverse", *reverse);
  if (out.has("linear")) out.set("linear", ParamValue::bools(std::vector<bool>(n_in, false)));
  return out;
}

JvpJaxpr jvp_instantiate(const Jaxpr& body, const std::vector<bool>& nonzero,
                         const std::vector<bool>& instantiate) {
  JvpJaxpr j = jvp_jaxpr(body, nonzero, /*instantiate=*/false);
  size_t n = body.outvars.size();
  JaxprBuilder b;
  std::vector<Atom> outs(j.jaxpr.outvars.begin(), j.jaxpr.outvars.begin() + n);
  size_t next = n;
  for (size_t i = 0; i < n; ++i) {
    if (j.out_nonzero[i]) {
      outs.push_back(j.jaxpr.outvars[next++]);
    } else if (i < instantiate.size() && instantiate[i] &&
               has_tangent_space(body.outvars[i].aval().dtype)) {
      const ShapedArray& a = body.outvars[i].aval();
      outs.push_back(lax_ops::zeros_like_aval(b, ShapedArray(a.dtype, a.shape, a.weak_type)));
      j.out_nonzero[i] = true;
    }
  }
  for (Eqn& e : b.eqns()) j.jaxpr.eqns.push_back(std::move(e));
  j.jaxpr.outvars = std::move(outs);
  return j;
}

std::vector<bool> differentiable(const Jaxpr& body, std::vector<bool> nonzero) {
  for (size_t i = 0; i < nonzero.size() && i < body.invars.size(); ++i)
    nonzero[i] = nonzero[i] && has_tangent_space(body.invars[i].aval().dtype);
  return nonzero;
}

Eqn make_eqn(std::string_view prim, std::vector<Atom> inputs, Params params,
             const SourceInfo& src) {
  const Primitive& p = get_primitive(prim);
  Eqn e;
  e.prim = &p;
  e.inputs = std::move(inputs);
  std::vector<ShapedArray> avals =
      infer_avals(p, avals_of(std::span<const Atom>(e.inputs)), params);
  for (ShapedArray& a : avals) e.outputs.emplace_back(std::move(a));
  e.params = std::move(params);
  e.source = src;
  return e;
}

std::vector<Var> staged_residuals(const Eqn& original, const std::vector<bool>& unks_in,
                                  const std::vector<bool>& inst_in,
                                  const std::vector<Eqn>& known_eqns, const Eqn& staged) {
  std::unordered_set<Var, VarHash> produced, seen;
  for (const Eqn& e : known_eqns)
    for (const Var& o : e.outputs) produced.insert(o);
  std::vector<Var> out;
  for (const Atom& a : staged.inputs) {
    if (!a.is_var() || !seen.insert(a.var()).second) continue;
    if (produced.count(a.var())) {
      out.push_back(a.var());
      continue;
    }
    for (size_t i = 0; i < original.inputs.size(); ++i)
      if (original.inputs[i].is_var() && original.inputs[i].var() == a.var() && !unks_in[i] &&
          !inst_in[i]) {
        out.push_back(a.var());
        break;
      }
  }
  return out;
}

}  // namespace cjax::cf
