#include "cjax/eval_jaxpr.h"

#include <fmt/format.h>

#include <unordered_map>

#include "cjax/backend.h"
#include "cjax/bind.h"
#include "cjax/trace.h"
#include "ir/errors.h"

namespace cjax {

Array literal_value(const Literal& l) {
  if (l.elided) throw Error("eval_jaxpr: an elided literal ([...]) has no value");
  ShapedArray aval(l.aval.dtype, {}, false);
  return Array::from_buffer(runtime::Buffer::full(aval, l.as_double()), l.aval.weak_type);
}

namespace {

// A whole program on concrete arrays, outside any trace, goes to the installed back end.
bool run_on_backend(const Jaxpr& jaxpr, std::span<const Array> consts, std::span<const Array> args,
                    std::vector<Array>& outs) {
  if (jaxpr.eqns.empty() || is_tracing()) return false;
  std::shared_ptr<Backend> backend = current_backend();
  if (!backend) return false;
  std::vector<runtime::Buffer> c, a;
  for (const Array& x : consts) {
    if (!x.is_concrete()) return false;
    c.push_back(x.buffer());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_concrete()) return false;
    if (!args[i].aval().same_type(jaxpr.invars[i].aval()))
      throw TypeError(
          fmt::format("eval_jaxpr: an argument of type {} given for a variable of "
                      "type {}",
                      args[i].aval().str_short(), jaxpr.invars[i].aval().str_short()));
    a.push_back(args[i].buffer());
  }
  std::vector<runtime::Buffer> results = backend->run(jaxpr, c, a);
  for (size_t i = 0; i < results.size(); ++i)
    outs.push_back(Array::from_buffer(std::move(results[i]), jaxpr.outvars[i].aval().weak_type));
  return true;
}

}  // namespace

std::vector<Array> eval_jaxpr(const Jaxpr& jaxpr, std::span<const Array> consts,
                              std::span<const Array> args) {
  std::vector<Array> attached;
  if (consts.empty() && !jaxpr.constvars.empty()) {
    if (jaxpr.consts.size() != jaxpr.constvars.size())
      throw TypeError(
          fmt::format("eval_jaxpr: {} constvars but no values given", jaxpr.constvars.size()));
    for (const ConstValue& c : jaxpr.consts)
      attached.push_back(Array::from_buffer(runtime::Buffer::from_const(c), c.aval.weak_type));
    consts = attached;
  }
  if (consts.size() != jaxpr.constvars.size())
    throw TypeError(fmt::format("eval_jaxpr: {} const values for {} constvars", consts.size(),
                                jaxpr.constvars.size()));
  if (args.size() != jaxpr.invars.size())
    throw TypeError(
        fmt::format("eval_jaxpr: {} arguments for {} invars", args.size(), jaxpr.invars.size()));

  if (std::vector<Array> outs; run_on_backend(jaxpr, consts, args, outs)) return outs;

  std::unordered_map<Var, Array, VarHash> env;
  auto bind_var = [&](const Var& v, const Array& x, const char* what) {
    if (!x.aval().same_type(v.aval()))
      throw TypeError(fmt::format("eval_jaxpr: {} of type {} given for a variable of type {}", what,
                                  x.aval().str_short(), v.aval().str_short()));
    env[v] = x;
  };
  for (size_t i = 0; i < consts.size(); ++i) bind_var(jaxpr.constvars[i], consts[i], "a const");
  for (size_t i = 0; i < args.size(); ++i) bind_var(jaxpr.invars[i], args[i], "an argument");

  auto read = [&](const Atom& a) -> Array {
    if (a.is_literal()) return literal_value(a.literal());
    auto it = env.find(a.var());
    if (it == env.end()) throw Error("eval_jaxpr: a variable is used before it is defined");
    return it->second;
  };

  for (const Eqn& eqn : jaxpr.eqns) {
    std::vector<Array> ins;
    ins.reserve(eqn.inputs.size());
    for (const Atom& a : eqn.inputs) ins.push_back(read(a));
    std::vector<Array> outs = cjax::bind(*eqn.prim, ins, eqn.params, eqn.source);
    if (outs.size() != eqn.outputs.size())
      throw Error(fmt::format("eval_jaxpr: {} gave {} outputs, the eqn has {}", eqn.prim->name,
                              outs.size(), eqn.outputs.size()));
    for (size_t i = 0; i < outs.size(); ++i)
      if (!eqn.outputs[i].is_drop()) env[eqn.outputs[i]] = outs[i];
  }
  std::vector<Array> result;
  result.reserve(jaxpr.outvars.size());
  for (const Atom& a : jaxpr.outvars) result.push_back(read(a));
  return result;
}

std::vector<Array> eval_jaxpr(const ClosedTrace& closed, std::span<const Array> args) {
  return eval_jaxpr(closed.jaxpr, closed.consts, args);
}

}  // namespace cjax
