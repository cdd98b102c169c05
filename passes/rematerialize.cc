#include "passes/rematerialize.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/call_body.h"
#include "ir/primitive.h"
#include "ir/sub_jaxprs.h"
#include "passes/builder.h"
#include "passes/inline.h"
#include "passes/repeated_calls.h"

namespace cjax {
namespace {

using Env = std::unordered_map<Var, Atom, VarHash>;

// One output computed a few instructions an element from its operands' elements at the same
// index (or from nothing, an iota), or a broadcast: as cheap to recompute as to read back.
bool cheap(const Eqn& e) {
  if (e.outputs.size() != 1 || e.outputs[0].is_drop() || !sub_jaxprs(e).empty()) return false;
  return e.prim->elementwise || e.prim->name == "broadcast_in_dim" || e.prim->name == "iota";
}

// A flat body (no call-like eqns but the kept ones) and where each value is read.
struct Uses {
  std::unordered_map<const void*, size_t> producer;              // var -> eqn index
  std::unordered_map<const void*, std::vector<size_t>> readers;  // sorted; N for an outvar
  std::unordered_set<const void*> always;                        // invars and constvars
  // For each eqn, 1 + the index of the last eqn before it that is not cheap (0 if none): the
  // eqns from there on fuse into one loop with it. And how many eqns before it are not cheap.
  std::vector<size_t> run_start, loop_nests_before;

  explicit Uses(const Jaxpr& j) {
    const size_t n = j.eqns.size();
    run_start.resize(n + 1, 0);
    loop_nests_before.resize(n + 1, 0);
    for (size_t i = 1; i <= n; ++i) {
      const bool nest = !cheap(j.eqns[i - 1]);
      run_start[i] = nest ? i : run_start[i - 1];
      loop_nests_before[i] = loop_nests_before[i - 1] + (nest ? 1 : 0);
    }
    for (const Var& v : j.invars) always.insert(v.id());
    for (const Var& v : j.constvars) always.insert(v.id());
    for (size_t i = 0; i < n; ++i) {
      for (const Var& v : j.eqns[i].outputs) producer[v.id()] = i;
      for (const Atom& a : j.eqns[i].inputs)
        if (a.is_var()) add_reader(a.var(), i);
    }
    for (const Atom& a : j.outvars)
      if (a.is_var()) add_reader(a.var(), n);
  }
  void add_reader(const Var& v, size_t i) {
    std::vector<size_t>& r = readers[v.id()];
    if (r.empty() || r.back() != i) r.push_back(i);
  }
  // Whether an eqn that is not cheap (a product, a reduction, a loop: its own loop nest, which an
  // elementwise chain does not fuse across) runs strictly between eqns `from` and `to`. Without
  // one, a value read at both fuses into their loop and is never held.
  bool held_across_loop_nest(size_t from, size_t to) const {
    return loop_nests_before[to] > loop_nests_before[from + 1];
  }
  // True when reading `x` at eqn `at` holds it across nothing it was not held across before: an
  // argument, an array small enough not to matter, or a value last read at or after `at`, or
  // in the run of cheap eqns that leads to `at` (which fuse into one loop).
  bool alive_at(const Var& x, size_t at) const {
    if (always.count(x.id()) || x.aval().nbytes() <= kSmallBytes) return true;
    auto it = readers.find(x.id());
    return it != readers.end() && it->second.back() + 1 > run_start[at];
  }
};

// The eqns (indices, producers first) that recompute `v` at eqn `at` from values alive there;
// false when that needs anything but cheap eqns or more than kMaxCopiedEqns of them.
bool collect_cone(const Jaxpr& j, const Uses& uses, const Var& v, size_t at,
                  std::vector<size_t>& cone, std::unordered_set<size_t>& seen) {
  auto p = uses.producer.find(v.id());
  if (p == uses.producer.end() || !cheap(j.eqns[p->second])) return false;
  if (!seen.insert(p->second).second) return true;
  for (const Atom& a : j.eqns[p->second].inputs)
    if (a.is_var() && !uses.alive_at(a.var(), at) &&
        !collect_cone(j, uses, a.var(), at, cone, seen))
      return false;
  cone.push_back(p->second);
  return cone.size() <= kMaxCopiedEqns;
}

// `j` without cheap eqns whose outputs nobody reads (the originals every reader now copies).
Jaxpr drop_unread_cheap_eqns(Jaxpr j) {
  std::unordered_map<const void*, size_t> reads;
  for (const Eqn& e : j.eqns)
    for (const Atom& a : e.inputs)
      if (a.is_var()) ++reads[a.var().id()];
  for (const Atom& a : j.outvars)
    if (a.is_var()) ++reads[a.var().id()];
  std::vector<bool> keep(j.eqns.size(), true);
  for (size_t i = j.eqns.size(); i-- > 0;) {
    const Eqn& e = j.eqns[i];
    if (!cheap(e) || reads[e.outputs[0].id()] > 0) continue;
    keep[i] = false;
    for (const Atom& a : e.inputs)
      if (a.is_var()) --reads[a.var().id()];
  }
  std::vector<Eqn> eqns;
  for (size_t i = 0; i < j.eqns.size(); ++i)
    if (keep[i]) eqns.push_back(std::move(j.eqns[i]));
  j.eqns = std::move(eqns);
  return j;
}

// One round over a flat body: every reader of a cheap value that is separated by a loop nest
// from the value's first reader (or, for the first, from the value) gets its own copy of the
// value's cone, when one can be made there. Returns false when nothing was copied.
bool copy_to_late_readers(Jaxpr& j, size_t min_bytes) {
  const Uses uses(j);
  std::map<size_t, std::vector<Var>> copies;  // reader -> the values copied for it
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    const Eqn& e = j.eqns[i];
    if (!cheap(e) || e.outputs[0].aval().nbytes() < min_bytes) continue;
    auto read_at = uses.readers.find(e.outputs[0].id());
    if (read_at == uses.readers.end()) continue;
    const std::vector<size_t>& readers = read_at->second;
    for (size_t k = 0; k < readers.size() && readers[k] < j.eqns.size(); ++k) {
      // The first reader, when the value would be held across a loop nest to reach it, gets a
      // copy too (the original is then dropped: the computation moves down to its reader).
      if (!uses.held_across_loop_nest(k == 0 ? i : readers[0], readers[k])) continue;
      std::vector<size_t> cone;
      std::unordered_set<size_t> seen;
      if (!collect_cone(j, uses, e.outputs[0], readers[k], cone, seen)) continue;
      // A reader that is not elementwise reads the copy from memory: a long cone computed again
      // to be stored again would cost more than the memory it saves.
      if (!j.eqns[readers[k]].prim->elementwise && cone.size() > kMaxStoredCopyEqns) continue;
      copies[readers[k]].push_back(e.outputs[0]);
    }
  }
  if (copies.empty()) return false;

  std::vector<Eqn> eqns;
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    Eqn reader = j.eqns[i];
    if (auto c = copies.find(i); c != copies.end()) {
      Env fresh;  // original value -> its copy, shared by the cones of this reader's operands
      for (const Var& v : c->second) {
        std::vector<size_t> cone;
        std::unordered_set<size_t> seen;
        collect_cone(j, uses, v, i, cone, seen);
        for (size_t p : cone) {
          const Var& out = j.eqns[p].outputs[0];
          if (fresh.count(out)) continue;
          Eqn copy = j.eqns[p];
          for (Atom& a : copy.inputs) a = read_env(fresh, a);
          copy.outputs = {Var(out.aval())};
          fresh.emplace(out, copy.outputs[0]);
          eqns.push_back(std::move(copy));
        }
      }
      for (Atom& a : reader.inputs) a = read_env(fresh, a);
    }
    eqns.push_back(std::move(reader));
  }
  j.eqns = std::move(eqns);
  j = drop_unread_cheap_eqns(std::move(j));
  return true;
}

// A value copied for a late reader may itself be read by a copy made for another: a few rounds
// settle it (each round's copies have one reader each).
constexpr int kRounds = 4;

class Rematerializer {
 public:
  Rematerializer(const Jaxpr& program, const RematerializeOptions& options) : options_(options) {
    if (options.keep_repeated_calls) repeated_.emplace(program);
  }

  Jaxpr rewrite(const Jaxpr& j) {
    JaxprBuilder b;
    Env env;
    flatten_into(b, j, env);
    std::vector<Atom> outs;
    for (const Atom& a : j.outvars) outs.push_back(read_env(env, a));
    Jaxpr flat = b.build(j.invars, std::move(outs), j.constvars, j.consts);
    flat.debug = j.debug;
    int round = 0;
    while (round++ < kRounds && copy_to_late_readers(flat, options_.min_bytes)) continue;
    return flat;
  }

 private:
  // `j`'s eqns into `b`, each call body inlined (renamed, so a body met twice stays
  // single-assignment) unless the back end compiles it once as a function; nested bodies
  // rewritten.
  void flatten_into(JaxprBuilder& b, const Jaxpr& j, Env& env) {
    for (const Eqn& e : j.eqns) {
      std::vector<Atom> ins;
      for (const Atom& a : e.inputs) ins.push_back(read_env(env, a));
      const Jaxpr* body = call_body(e);
      const std::string* key = repeated_ ? repeated_->key(e) : nullptr;
      if (body && body->constvars.empty() && !key) {
        JaxprBuilder nested;
        Env inner;
        flatten_into(nested, *body, inner);
        std::vector<Atom> body_outs;
        for (const Atom& o : body->outvars) body_outs.push_back(read_env(inner, o));
        Jaxpr flat = nested.build(body->invars, std::move(body_outs));
        std::vector<Atom> outs = inline_jaxpr(b, flat, {}, ins);
        for (size_t i = 0; i < e.outputs.size(); ++i) env.emplace(e.outputs[i], outs[i]);
        continue;
      }
      Eqn copy = e;
      copy.inputs = std::move(ins);
      if (key) {  // one rewritten body per repeated text, shared as the original was
        auto [it, added] = kept_.try_emplace(key);
        if (added) it->second = std::make_shared<const Jaxpr>(rewrite(*body));
        copy.params.set(e.prim->call_body, it->second);
      } else if (!sub_jaxprs(e).empty()) {
        copy.params = map_sub_jaxprs(e.params, [&](const Jaxpr& s) { return rewrite(s); });
      }
      b.append(std::move(copy));
    }
  }

  RematerializeOptions options_;
  std::optional<RepeatedCalls> repeated_;
  std::unordered_map<const std::string*, JaxprRef> kept_;
};

}  // namespace

Jaxpr rematerialize_cheap_values(const Jaxpr& program, const RematerializeOptions& options) {
  return Rematerializer(program, options).rewrite(program);
}

}  // namespace cjax
