#include "passes/inline.h"

#include <fmt/format.h>

#include <unordered_map>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "ir/primitive.h"
#include "passes/repeated_calls.h"

namespace cjax {

std::vector<Atom> inline_jaxpr(JaxprBuilder& b, const Jaxpr& callee, std::span<const Atom> consts,
                               std::span<const Atom> args) {
  if (args.size() != callee.invars.size() || consts.size() != callee.constvars.size())
    throw Error(
        fmt::format("inline: {} args and {} consts for a jaxpr of {} invars and {} constvars",
                    args.size(), consts.size(), callee.invars.size(), callee.constvars.size()));
  std::unordered_map<Var, Atom, VarHash> env;
  for (size_t i = 0; i < consts.size(); ++i) env.emplace(callee.constvars[i], consts[i]);
  for (size_t i = 0; i < args.size(); ++i) env.emplace(callee.invars[i], args[i]);
  auto read = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = env.find(a.var());
    return it == env.end() ? a : it->second;
  };
  for (const Eqn& e : callee.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = read(in);
    for (Var& out : copy.outputs) {
      Var fresh = out.is_drop() ? Var::drop(out.aval()) : Var(out.aval());
      env.emplace(out, fresh);
      out = fresh;
    }
    b.append(std::move(copy));
  }
  std::vector<Atom> outs;
  for (const Atom& o : callee.outvars) outs.push_back(read(o));
  return outs;
}

namespace {

void inline_into(JaxprBuilder& b, const Jaxpr& j, std::unordered_map<Var, Atom, VarHash>& env) {
  auto read = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = env.find(a.var());
    return it == env.end() ? a : it->second;
  };
  for (const Eqn& e : j.eqns) {
    std::vector<Atom> ins;
    for (const Atom& in : e.inputs) ins.push_back(read(in));
    if (e.prim->name != "jit") {
      Eqn copy = e;
      copy.inputs = std::move(ins);
      b.append(std::move(copy));
      continue;
    }
    const Jaxpr& body = *e.params.get_jaxpr("jaxpr");
    std::unordered_map<Var, Atom, VarHash> inner;
    for (size_t i = 0; i < body.invars.size(); ++i) inner.emplace(body.invars[i], ins[i]);
    // The body's own consts, if any, stay attached as literals are not possible for arrays:
    // callers give jit bodies without consts (JAX's closed jit jaxprs have none after tracing).
    if (!body.constvars.empty())
      throw UnsupportedError("inline: a jit body with constvars (from " + e.source.summarize() +
                             ")");
    JaxprBuilder nested;
    inline_into(nested, body, inner);
    std::vector<Atom> body_outs;
    for (const Atom& o : body.outvars)
      body_outs.push_back(o.is_literal() ? o : (inner.count(o.var()) ? inner.at(o.var()) : o));
    // Rename the body's vars so a jit body inlined twice stays single-assignment.
    Jaxpr flat = nested.build({}, body_outs);
    std::vector<Atom> outs = inline_jaxpr(b, flat, {}, {});
    for (size_t i = 0; i < e.outputs.size(); ++i) env.emplace(e.outputs[i], outs[i]);
  }
}

}  // namespace

Atom read_env(const std::unordered_map<Var, Atom, VarHash>& env, const Atom& a) {
  if (a.is_literal()) return a;
  auto it = env.find(a.var());
  return it == env.end() ? a : it->second;
}

namespace {

struct KeptCalls;
Jaxpr expand_remat(const Jaxpr& jaxpr, KeptCalls& kept);

// What expand_remat keeps: the repeated calls, and the expanded body of each (one jaxpr, shared).
struct KeptCalls {
  RepeatedCalls* repeated = nullptr;
  std::unordered_map<const std::string*, JaxprRef> bodies;
};

void expand_into(JaxprBuilder& b, const Jaxpr& j, std::unordered_map<Var, Atom, VarHash>& env,
                 KeptCalls& kept) {
  for (const Eqn& e : j.eqns) {
    std::vector<Atom> ins;
    for (const Atom& in : e.inputs) ins.push_back(read_env(env, in));
    const std::string* key =
        e.prim->name == "remat2" && kept.repeated ? kept.repeated->key(e) : nullptr;
    if (e.prim->name != "remat2" || key) {
      Eqn copy = e;
      copy.inputs = std::move(ins);
      if (key) {
        JaxprRef& body = kept.bodies[key];
        if (!body)
          body = std::make_shared<const Jaxpr>(expand_remat(*e.params.get_jaxpr("jaxpr"), kept));
        copy.params.set("jaxpr", body);
      }
      b.append(std::move(copy));
      continue;
    }
    const ParamValue* prevent = e.params.find("prevent_cse");
    bool barrier = e.params.get_bool("differentiated") && prevent && prevent->is<bool>() &&
                   prevent->as<bool>();
    if (barrier && !ins.empty()) {
      b.set_source(e.source);
      std::vector<Var> guarded = b.emit("optimization_barrier", ins);
      ins.assign(guarded.begin(), guarded.end());
    }
    // Expand the body with fresh variables (a body may be expanded more than once).
    const Jaxpr& body = *e.params.get_jaxpr("jaxpr");
    JaxprBuilder inner;
    std::unordered_map<Var, Atom, VarHash> inner_env;
    expand_into(inner, body, inner_env, kept);
    std::vector<Atom> body_outs;
    for (const Atom& o : body.outvars) body_outs.push_back(read_env(inner_env, o));
    Jaxpr flat = inner.build(body.invars, body_outs);
    std::vector<Atom> outs = inline_jaxpr(b, flat, {}, ins);
    for (size_t i = 0; i < e.outputs.size(); ++i) env.emplace(e.outputs[i], outs[i]);
  }
}

Jaxpr expand_remat(const Jaxpr& jaxpr, KeptCalls& kept) {
  JaxprBuilder b;
  std::unordered_map<Var, Atom, VarHash> env;
  expand_into(b, jaxpr, env, kept);
  std::vector<Atom> outs;
  for (const Atom& o : jaxpr.outvars) outs.push_back(read_env(env, o));
  Jaxpr r = b.build(jaxpr.invars, std::move(outs), jaxpr.constvars, jaxpr.consts);
  r.debug = jaxpr.debug;
  return r;
}

}  // namespace

Jaxpr expand_remat(const Jaxpr& jaxpr, RepeatedCalls* keep) {
  KeptCalls kept{keep, {}};
  return expand_remat(jaxpr, kept);
}

bool forwards_operands(std::string_view prim) {
  return prim == "name" || prim == "optimization_barrier" || prim == "device_put" ||
         prim == "stop_gradient";
}

Jaxpr drop_forwarding_eqns(const Jaxpr& jaxpr, bool keep_memory_transfers) {
  std::unordered_map<Var, Atom, VarHash> env;
  Jaxpr out = jaxpr;
  out.eqns.clear();
  for (const Eqn& e : jaxpr.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = read_env(env, in);
    const bool transfer = keep_memory_transfers && e.prim->name == "device_put" &&
                          lax_params::device_put_memory_kind(e.params).has_value();
    if (!transfer && forwards_operands(e.prim->name) && copy.inputs.size() == copy.outputs.size()) {
      for (size_t i = 0; i < copy.outputs.size(); ++i) env.emplace(copy.outputs[i], copy.inputs[i]);
      continue;
    }
    out.eqns.push_back(std::move(copy));
  }
  for (Atom& o : out.outvars) o = read_env(env, o);
  return out;
}

Jaxpr inline_calls(const Jaxpr& jaxpr) {
  JaxprBuilder b;
  std::unordered_map<Var, Atom, VarHash> env;
  inline_into(b, jaxpr, env);
  std::vector<Atom> outs;
  for (const Atom& o : jaxpr.outvars)
    outs.push_back(o.is_literal() ? o : (env.count(o.var()) ? env.at(o.var()) : o));
  Jaxpr r = b.build(jaxpr.invars, std::move(outs), jaxpr.constvars, jaxpr.consts);
  r.debug = jaxpr.debug;
  return r;
}

}  // namespace cjax
