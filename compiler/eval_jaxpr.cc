#include "compiler/eval_jaxpr.h"

#include <fmt/format.h>

#include <unordered_map>

#include "compiler/bind.h"
#include "ir/errors.h"

namespace cjax {

Array literal_value(const Literal& l) {
  if (l.elided) throw Error("eval_jaxpr: an elided literal ([...]) has no value");
  ShapedArray aval(l.aval.dtype, {}, false);
  return Array::from_buffer(runtime::Buffer::full(aval, l.as_double()), l.aval.weak_type);
}

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
