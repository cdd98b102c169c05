#include "passes/cse.h"

#include <unordered_map>

#include "ir/primitive.h"

namespace cjax {
namespace {

bool same_atom(const Atom& a, const Atom& b) {
  if (a.is_var() != b.is_var()) return false;
  if (a.is_var()) return a.var() == b.var();
  const Literal& x = a.literal();
  const Literal& y = b.literal();
  return x.aval.same_type(y.aval) && x.value == y.value && x.elided == y.elided;
}

bool mergeable(const Eqn& e) {
  const std::string& n = e.prim->name;
  return !e.prim->opaque && n != "optimization_barrier" && n != "device_put" && !e.outputs.empty();
}

}  // namespace

Jaxpr cse(const Jaxpr& jaxpr) {
  Jaxpr out = jaxpr;
  out.eqns.clear();
  std::unordered_map<Var, Var, VarHash> replaced;
  auto read = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = replaced.find(a.var());
    return it == replaced.end() ? a : Atom(it->second);
  };
  // Candidates by primitive; a linear scan per primitive keeps this simple and exact.
  std::unordered_map<const Primitive*, std::vector<size_t>> seen;
  for (const Eqn& e : jaxpr.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = read(in);
    const Eqn* match = nullptr;
    if (mergeable(copy)) {
      for (size_t idx : seen[copy.prim]) {
        const Eqn& prev = out.eqns[idx];
        if (prev.inputs.size() != copy.inputs.size() || !(prev.params == copy.params)) continue;
        bool same = true;
        for (size_t i = 0; same && i < copy.inputs.size(); ++i) same = same_atom(prev.inputs[i], copy.inputs[i]);
        if (same) {
          match = &prev;
          break;
        }
      }
    }
    if (match) {
      for (size_t i = 0; i < copy.outputs.size(); ++i) replaced.emplace(copy.outputs[i], match->outputs[i]);
      continue;
    }
    if (mergeable(copy)) seen[copy.prim].push_back(out.eqns.size());
    out.eqns.push_back(std::move(copy));
  }
  for (Atom& o : out.outvars) o = read(o);
  return out;
}

}  // namespace cjax
