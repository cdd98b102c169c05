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
  // Candidates bucketed by a hash of (primitive, operands); params are compared on a hit.
  std::unordered_map<size_t, std::vector<size_t>> seen;
  auto key_of = [](const Eqn& e) {
    size_t h = std::hash<const void*>()(e.prim);
    for (const Atom& a : e.inputs) {
      size_t x = a.is_var() ? std::hash<const void*>()(a.var().id())
                            : std::hash<double>()(a.literal().as_double());
      h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h;
  };
  for (const Eqn& e : jaxpr.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = read(in);
    const Eqn* match = nullptr;
    size_t key = key_of(copy);
    if (mergeable(copy)) {
      for (size_t idx : seen[key]) {
        const Eqn& prev = out.eqns[idx];
        if (prev.inputs.size() != copy.inputs.size() || !(prev.params == copy.params)) continue;
        bool same = true;
        for (size_t i = 0; same && i < copy.inputs.size(); ++i)
          same = same_atom(prev.inputs[i], copy.inputs[i]);
        if (same) {
          match = &prev;
          break;
        }
      }
    }
    if (match) {
      for (size_t i = 0; i < copy.outputs.size(); ++i)
        replaced.emplace(copy.outputs[i], match->outputs[i]);
      continue;
    }
    if (mergeable(copy)) seen[key].push_back(out.eqns.size());
    out.eqns.push_back(std::move(copy));
  }
  for (Atom& o : out.outvars) o = read(o);
  return out;
}

}  // namespace cjax
