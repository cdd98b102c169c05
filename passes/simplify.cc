#include "passes/simplify.h"

#include <numeric>
#include <optional>
#include <unordered_map>

#include "ir/primitive.h"
#include "passes/dce.h"

namespace cjax {
namespace {

bool is_scalar_literal(const Atom& a, double v) {
  return a.is_literal() && !a.literal().elided && a.literal().aval.shape.empty() &&
         a.literal().as_double() == v;
}

// The input an eqn passes through unchanged, if it does.
std::optional<Atom> passthrough(const Eqn& e,
                                const std::unordered_map<Var, const Eqn*, VarHash>& producer) {
  if (e.outputs.size() != 1) return std::nullopt;
  const ShapedArray& out = e.outputs[0].aval();
  auto same_as_out = [&](const Atom& a) {
    return a.aval().same_type(out) && a.aval().weak_type == out.weak_type;
  };
  const std::string& n = e.prim->name;
  const auto& in = e.inputs;
  if (n == "mul" && in.size() == 2) {
    if (is_scalar_literal(in[1], 1.0) && same_as_out(in[0])) return in[0];
    if (is_scalar_literal(in[0], 1.0) && same_as_out(in[1])) return in[1];
  }
  if ((n == "add" || n == "add_any") && in.size() == 2) {
    if (is_scalar_literal(in[1], 0.0) && same_as_out(in[0])) return in[0];
    if (is_scalar_literal(in[0], 0.0) && same_as_out(in[1])) return in[1];
  }
  if (n == "sub" && in.size() == 2 && is_scalar_literal(in[1], 0.0) && same_as_out(in[0]))
    return in[0];
  if (n == "neg" && in[0].is_var()) {
    auto it = producer.find(in[0].var());
    if (it != producer.end() && it->second->prim->name == "neg") return it->second->inputs[0];
  }
  if ((n == "convert_element_type" || n == "reshape" || n == "broadcast_in_dim") &&
      same_as_out(in[0])) {
    if (n != "broadcast_in_dim") return in[0];
    std::vector<int64_t> dims = e.params.get_ints("broadcast_dimensions"), iota(dims.size());
    std::iota(iota.begin(), iota.end(), 0);
    if (dims == iota) return in[0];
  }
  if (n == "transpose") {
    std::vector<int64_t> perm = e.params.get_ints("permutation"), iota(perm.size());
    std::iota(iota.begin(), iota.end(), 0);
    if (perm == iota) return in[0];
  }
  if (n == "reduce_sum" && e.params.get_ints("axes").empty() && same_as_out(in[0])) return in[0];
  return std::nullopt;
}

}  // namespace

Jaxpr simplify(const Jaxpr& jaxpr) {
  Jaxpr out = jaxpr;
  out.eqns.clear();
  std::unordered_map<Var, Atom, VarHash> replaced;
  std::unordered_map<Var, const Eqn*, VarHash> producer;
  auto read = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = replaced.find(a.var());
    return it == replaced.end() ? a : it->second;
  };
  out.eqns.reserve(jaxpr.eqns.size());
  for (const Eqn& e : jaxpr.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = read(in);
    if (auto same = passthrough(copy, producer)) {
      replaced.emplace(copy.outputs[0], *same);
      continue;
    }
    out.eqns.push_back(std::move(copy));
    for (const Var& o : out.eqns.back().outputs) producer.emplace(o, &out.eqns.back());
  }
  for (Atom& o : out.outvars) o = read(o);
  return dce(out);
}

}  // namespace cjax
