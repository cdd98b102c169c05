#include "passes/memory/save_set.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/primitive.h"
#include "ir/rules/registry.h"
#include "ir/sub_jaxprs.h"
#include "passes/inline.h"
#include "passes/memory/budget.h"
#include "passes/policies.h"
#include "passes/primitive_rules.h"

namespace cjax::memory {
namespace {

using Env = std::unordered_map<Var, Atom, VarHash>;

bool is_save_set_name(const Primitive& prim, const Params& params) {
  const ParamValue* name = params.find("name");
  return prim.name == "name" && name && name->is<std::string>() &&
         name->as<std::string>() == kSaveSetName;
}

bool is_save_set_name(const Eqn& e) {
  return is_save_set_name(*e.prim, e.params);
}

// Appends `eqn` (its inputs read through `env`), then a name for each of its outputs when `named`.
void emit(Jaxpr& out, Env& env, Eqn eqn, bool named) {
  for (Atom& in : eqn.inputs) in = read_env(env, in);
  const std::vector<Var> outputs = eqn.outputs;
  const SourceInfo source = eqn.source;
  out.eqns.push_back(std::move(eqn));
  if (!named) return;
  static const Primitive& name = get_primitive("name");
  for (const Var& o : outputs) {
    Var n(o.aval());
    out.eqns.push_back(Eqn{&name, {o}, {n}, Params{{"name", std::string(kSaveSetName)}}, source});
    env.insert_or_assign(o, Atom(n));
  }
}

Jaxpr finish(const Jaxpr& like, Jaxpr out, const Env& env) {
  out.invars = like.invars;
  out.constvars = like.constvars;
  out.consts = like.consts;
  out.debug = like.debug;
  for (const Atom& o : like.outvars) out.outvars.push_back(read_env(env, o));
  return out;
}

// Every value `j` computes named, in its nested jaxprs too: what saving everything in a loop or
// branch body means under save_only_these_names.
Jaxpr name_everything(const Jaxpr& j) {
  Jaxpr out;
  Env env;
  for (const Eqn& e : j.eqns) {
    Eqn copy = e;
    copy.params = map_sub_jaxprs(e.params, name_everything);
    emit(out, env, std::move(copy), true);
  }
  return finish(j, std::move(out), env);
}

struct Namer {
  const std::unordered_map<const Eqn*, size_t>& index;
  const std::vector<bool>& save;

  Jaxpr operator()(const Jaxpr& j) const {
    Jaxpr out;
    Env env;
    for (const Eqn& e : j.eqns) {
      Eqn copy = e;
      const bool split = is_split_call(e);
      copy.params =
          split ? map_sub_jaxprs(e.params, *this) : map_sub_jaxprs(e.params, name_everything);
      emit(out, env, std::move(copy), !split && save[index.at(&e)]);
    }
    return finish(j, std::move(out), env);
  }
};

bool has_names(const Jaxpr& j) {
  for (const Eqn& e : j.eqns) {
    if (is_save_set_name(e)) return true;
    for (const Jaxpr* sub : sub_jaxprs(e))
      if (has_names(*sub)) return true;
  }
  return false;
}

Jaxpr drop(const Jaxpr& j);

Jaxpr drop_if_named(const Jaxpr& j) {
  return has_names(j) ? drop(j) : j;
}

// The producer of a named value writes the name's output itself, so the residual lists and the
// staged side's binders (which hold the name's output) stay valid.
Jaxpr drop(const Jaxpr& j) {
  std::unordered_set<Var, VarHash> produced;
  for (const Eqn& e : j.eqns)
    for (const Var& o : e.outputs) produced.insert(o);
  std::unordered_map<Var, Var, VarHash> rename;  // producer's output -> the name's output
  Env env;                                       // names of inputs and literals: their operand
  for (const Eqn& e : j.eqns)
    if (is_save_set_name(e)) {
      if (e.inputs[0].is_var() && produced.count(e.inputs[0].var())) {
        // A value named twice: the later name reads as the first.
        if (auto [it, fresh] = rename.emplace(e.inputs[0].var(), e.outputs[0]); !fresh)
          env.insert_or_assign(e.outputs[0], Atom(it->second));
      } else
        env.insert_or_assign(e.outputs[0], e.inputs[0]);
    }
  auto renamed = [&](const Atom& a) -> Atom {
    if (a.is_var())
      if (auto it = rename.find(a.var()); it != rename.end()) return it->second;
    return read_env(env, a);
  };
  Jaxpr out;
  for (const Eqn& e : j.eqns) {
    if (is_save_set_name(e)) continue;
    Eqn copy = e;
    const std::vector<const Jaxpr*> subs = sub_jaxprs(e);
    if (std::any_of(subs.begin(), subs.end(), [](const Jaxpr* s) { return has_names(*s); }))
      copy.params = map_sub_jaxprs(e.params, drop_if_named);
    for (Atom& in : copy.inputs) in = renamed(in);
    for (Var& o : copy.outputs)
      if (auto it = rename.find(o); it != rename.end()) o = it->second;
    out.eqns.push_back(std::move(copy));
  }
  out.invars = j.invars;
  out.constvars = j.constvars;
  out.consts = j.consts;
  out.debug = j.debug;
  for (const Atom& o : j.outvars) out.outvars.push_back(renamed(o));
  return out;
}

}  // namespace

NamedSaveSet apply_save_set(const Jaxpr& body, const std::vector<bool>& save,
                            const PolicyRef& fallback) {
  // A built-in policy chosen as a whole decides the planned eqns as the save set does.
  if (fallback) return {body, fallback};
  const std::vector<const Eqn*> eqns = plan_eqns(body);
  std::unordered_map<const Eqn*, size_t> index;
  for (size_t k = 0; k < eqns.size(); ++k) index[eqns[k]] = k;
  return {Namer{index, save}(body), saved_values_policy()};
}

const PolicyRef& saved_values_policy() {
  static const PolicyRef policy = policies::make_bool_policy(
      "memory_budget", [](const Primitive& prim, std::span<const ShapedArray>,
                          const Params& params) { return is_save_set_name(prim, params); });
  return policy;
}

Jaxpr drop_save_set_names(Jaxpr jaxpr) {
  return has_names(jaxpr) ? drop(jaxpr) : std::move(jaxpr);
}

}  // namespace cjax::memory
