#include "passes/recompute_residuals.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/dce.h"

namespace cjax {
namespace {

using Ids = std::unordered_set<const void*>;

bool elementwise(const Eqn& e) {
  return e.prim && e.prim->elementwise;
}

// Worth recomputing: a few instructions an element. (A tanh polynomial in the backward loop
// costs block/mlp's step more than reading the tanh back: measured, docs/backend.md.)
bool cheap(const Eqn& e) {
  return elementwise(e) && !e.prim->transcendental;
}

// The forward program as the search sees it: who produces each variable.
struct Forward {
  const Jaxpr& jaxpr;
  std::unordered_map<const void*, size_t> producer;  // var -> eqn index
  Ids invars;

  explicit Forward(const Jaxpr& j) : jaxpr(j) {
    for (size_t i = 0; i < j.eqns.size(); ++i)
      for (const Var& v : j.eqns[i].outputs) producer[v.id()] = i;
    for (const Var& v : j.invars) invars.insert(v.id());
  }
  const Eqn* eqn_of(const Var& v) const {
    auto it = producer.find(v.id());
    return it == producer.end() ? nullptr : &jaxpr.eqns[it->second];
  }
};

// The elementwise eqns that recompute `root` from `available` values and the forward program's
// arguments (collected in `args`); false when the cone reaches anything else (a constvar, a
// non-elementwise eqn's output that is not kept) or grows too big.
bool collect_cone(const Forward& f, const Var& root, const Ids& available, std::set<size_t>& cone,
                  std::vector<Var>& args, const std::function<bool(const Var&)>& arg_available) {
  std::vector<Var> stack = {root};
  Ids seen;
  while (!stack.empty()) {
    Var v = stack.back();
    stack.pop_back();
    if (!seen.insert(v.id()).second || available.count(v.id())) continue;
    if (f.invars.count(v.id())) {
      if (arg_available && !arg_available(v)) return false;
      args.push_back(v);
      continue;
    }
    auto it = f.producer.find(v.id());
    if (it == f.producer.end() || !cheap(f.jaxpr.eqns[it->second])) return false;
    cone.insert(it->second);
    if (cone.size() > kMaxConeEqns) return false;
    for (const Atom& a : f.jaxpr.eqns[it->second].inputs)
      if (a.is_var()) stack.push_back(a.var());
  }
  return true;
}

Atom substitute(const Atom& a, const std::unordered_map<const void*, Atom>& sub) {
  if (!a.is_var()) return a;
  auto it = sub.find(a.var().id());
  return it == sub.end() ? a : it->second;
}

}  // namespace

ResidualSplit recompute_cheap_residuals(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals,
                                        const std::function<bool(const Var&)>& arg_available) {
  const size_t R = num_residuals, m = fwd.outvars.size() - R;
  const Forward f(fwd);

  // Residuals the backward program reads only in elementwise eqns.
  std::unordered_map<const void*, size_t> res_of_invar;
  for (size_t k = 0; k < R; ++k) res_of_invar[bwd.invars[k].id()] = k;
  std::vector<bool> fusable(R, true), read(R, false);
  for (const Eqn& e : bwd.eqns)
    for (const Atom& a : e.inputs)
      if (a.is_var())
        if (auto it = res_of_invar.find(a.var().id()); it != res_of_invar.end()) {
          read[it->second] = true;
          fusable[it->second] = fusable[it->second] && elementwise(e);
        }
  for (const Atom& a : bwd.outvars)
    if (a.is_var())
      if (auto it = res_of_invar.find(a.var().id()); it != res_of_invar.end())
        fusable[it->second] = false;

  std::vector<bool> recompute(R, false);
  for (size_t k = 0; k < R; ++k) {
    const Atom& r = fwd.outvars[m + k];
    recompute[k] =
        fusable[k] && read[k] && r.is_var() && f.eqn_of(r.var()) && cheap(*f.eqn_of(r.var()));
  }
  // Residuals recomputed from kept ones, decided in the order the forward program computes them:
  // a candidate's cone can only reach earlier ones, already decided, so a candidate that cannot
  // be recomputed (a bias added to a dot's output) is kept and available to the later ones that
  // read it (the GELU's 3·x² of that sum) before they are tried.
  Ids available;
  for (size_t k = 0; k < R; ++k)
    if (!recompute[k] && fwd.outvars[m + k].is_var())
      available.insert(fwd.outvars[m + k].var().id());
  std::vector<size_t> order;
  for (size_t k = 0; k < R; ++k)
    if (recompute[k]) order.push_back(k);
  auto position = [&](size_t k) { return f.producer.at(fwd.outvars[m + k].var().id()); };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return position(a) < position(b); });
  for (size_t k : order) {
    std::set<size_t> mine;
    std::vector<Var> my_args;
    if (!collect_cone(f, fwd.outvars[m + k].var(), available, mine, my_args, arg_available)) {
      recompute[k] = false;
      available.insert(fwd.outvars[m + k].var().id());
    }
  }
  std::set<size_t> cone;
  std::vector<Var> args;
  for (size_t k = 0; k < R; ++k) {
    if (!recompute[k]) continue;
    // Against the final set of kept residuals a cone only shrinks: it is found again.
    std::set<size_t> mine;
    if (!collect_cone(f, fwd.outvars[m + k].var(), available, mine, args, arg_available))
      throw Error("recompute_cheap_residuals: a residual's cone was lost");
    cone.insert(mine.begin(), mine.end());
  }

  ResidualSplit out;
  out.recomputed = static_cast<size_t>(std::count(recompute.begin(), recompute.end(), true));
  if (out.recomputed == 0) return {fwd, bwd, R, 0, std::vector<bool>(R, false)};
  out.dropped = recompute;

  // The new residuals: the kept ones, then the arguments the recomputation reads that are not
  // residuals already.
  std::vector<Atom> fwd_outs(fwd.outvars.begin(), fwd.outvars.begin() + static_cast<long>(m));
  std::vector<Var> bwd_invars;
  std::unordered_map<const void*, Atom> into_bwd;  // forward value -> what the backward reads
  for (size_t k = 0; k < R; ++k) {
    if (recompute[k]) continue;
    fwd_outs.push_back(fwd.outvars[m + k]);
    bwd_invars.push_back(bwd.invars[k]);
    if (fwd.outvars[m + k].is_var()) into_bwd.emplace(fwd.outvars[m + k].var().id(), bwd.invars[k]);
  }
  for (const Var& a : args) {
    if (into_bwd.count(a.id())) continue;
    Var fresh(a.aval());
    fwd_outs.push_back(a);
    bwd_invars.push_back(fresh);
    into_bwd.emplace(a.id(), fresh);
  }
  out.num_residuals = bwd_invars.size();
  bwd_invars.insert(bwd_invars.end(), bwd.invars.begin() + static_cast<long>(R), bwd.invars.end());

  // The backward program: its eqns reading the recomputed values in place of the residuals they
  // replace, each cone eqn placed just before the first eqn that needs it (so that it lands in
  // the same compiled segment as its reader and fuses into its loop; segments.h). The cone eqns
  // keep their own variables.
  // (A value returned at a kept position too is read from there: the cone stopped at it.)
  std::unordered_map<const void*, Atom> recomputed;
  for (size_t k = 0; k < R; ++k)
    if (recompute[k])
      recomputed.emplace(bwd.invars[k].id(), substitute(fwd.outvars[m + k], into_bwd));
  std::unordered_map<const void*, size_t> cone_eqn_of;  // a cone eqn's output -> its index
  for (size_t i : cone)
    for (const Var& v : fwd.eqns[i].outputs) cone_eqn_of[v.id()] = i;
  std::vector<Eqn> eqns;
  std::set<size_t> placed;
  std::function<void(const Atom&)> place_producer = [&](const Atom& a) {
    if (!a.is_var()) return;
    auto it = cone_eqn_of.find(a.var().id());
    if (it == cone_eqn_of.end() || !placed.insert(it->second).second) return;
    Eqn e = fwd.eqns[it->second];
    for (Atom& in : e.inputs) {
      place_producer(in);
      in = substitute(in, into_bwd);
    }
    eqns.push_back(std::move(e));
  };
  for (const Eqn& original : bwd.eqns) {
    Eqn e = original;
    for (Atom& a : e.inputs) {
      a = substitute(a, recomputed);
      place_producer(a);
    }
    eqns.push_back(std::move(e));
  }
  out.bwd = bwd;
  out.bwd.invars = std::move(bwd_invars);
  out.bwd.eqns = std::move(eqns);

  out.fwd = fwd;
  out.fwd.outvars = std::move(fwd_outs);
  out.fwd = dce(out.fwd);
  return out;
}

}  // namespace cjax
