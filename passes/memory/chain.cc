#include "passes/memory/chain.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/builder.h"
#include "passes/util.h"

namespace cjax::memory {

// ---------------------------------------------------------------------------------------------
// The binomial schedule.

namespace {

struct RevolveTable {
  std::map<std::pair<size_t, size_t>, std::pair<size_t, size_t>> memo;  // -> (cost, split)
  std::pair<size_t, size_t> get(size_t d, size_t s) {
    if (d <= 1) return {0, 0};
    if (s == 0) return {kUnreachable, 0};
    auto it = memo.find({d, s});
    if (it != memo.end()) return it->second;
    std::pair<size_t, size_t> best{kUnreachable, 0};
    for (size_t m = 1; m < d; ++m) {
      const size_t rest = get(d - m, s - 1).first, first = get(m, s).first;
      if (rest == kUnreachable || first == kUnreachable) continue;
      if (m + rest + first < best.first) best = {m + rest + first, m};
    }
    memo[{d, s}] = best;
    return best;
  }
};

RevolveTable& table() {
  thread_local RevolveTable t;
  return t;
}

size_t binomial(size_t n, size_t k) {
  if (k > n) return 0;
  size_t r = 1;
  for (size_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;  // exact: r is C(n-k+i, i)
  return r;
}

}  // namespace

size_t revolve_cost(size_t steps, size_t slots) {
  return table().get(steps, slots).first;
}

size_t revolve_split(size_t steps, size_t slots) {
  return table().get(steps, slots).second;
}

size_t revolve_max_steps(size_t slots, size_t repetitions) {
  return binomial(slots + repetitions, slots);
}

size_t revolve_closed_form(size_t steps, size_t slots) {
  if (slots == 0) throw Error("revolve_closed_form: at least one snapshot slot is needed");
  size_t r = 0;
  while (revolve_max_steps(slots, r) < steps) ++r;
  return r * steps - binomial(slots + r, slots + 1);
}

// ---------------------------------------------------------------------------------------------
// Chain detection.

namespace {

// How an input of an eqn of a run is reached.
enum class Source { local, previous, input, literal, other };
struct InputKey {
  Source source = Source::other;
  size_t offset = 0, output = 0;  // local/previous: the producing eqn (offset in its run), output
  std::string literal;
  bool operator==(const InputKey&) const = default;
};

struct Dataflow {
  std::unordered_map<const void*, std::pair<size_t, size_t>> producer;  // var -> (eqn, output)
  std::unordered_map<const void*, std::vector<size_t>> readers;         // var -> eqns
  std::unordered_set<const void*> inputs, outvars;
};

Dataflow dataflow(const Jaxpr& body) {
  Dataflow f;
  for (const Var& v : body.invars) f.inputs.insert(v.id());
  for (const Var& v : body.constvars) f.inputs.insert(v.id());
  for (size_t k = 0; k < body.eqns.size(); ++k) {
    for (const Atom& in : body.eqns[k].inputs)
      if (in.is_var()) f.readers[in.var().id()].push_back(k);
    for (size_t o = 0; o < body.eqns[k].outputs.size(); ++o)
      f.producer[body.eqns[k].outputs[o].id()] = {k, o};
  }
  for (const Atom& a : body.outvars)
    if (a.is_var()) f.outvars.insert(a.var().id());
  return f;
}

InputKey key_of(const Atom& a, size_t run_start, size_t length, const Dataflow& f) {
  InputKey k;
  if (a.is_literal()) {
    k.source = Source::literal;
    k.literal = a.literal().value_str() + a.aval().str_short();
    return k;
  }
  auto p = f.producer.find(a.var().id());
  if (p == f.producer.end()) {
    k.source = f.inputs.count(a.var().id()) ? Source::input : Source::other;
    return k;
  }
  const size_t e = p->second.first;
  if (e >= run_start && e < run_start + length)
    return {Source::local, e - run_start, p->second.second, {}};
  if (e + length >= run_start && e < run_start)
    return {Source::previous, e + length - run_start, p->second.second, {}};
  return k;
}

bool same_eqn_shape(const Eqn& a, const Eqn& b) {
  if (a.prim != b.prim || a.inputs.size() != b.inputs.size() ||
      a.outputs.size() != b.outputs.size() || !(a.params == b.params))
    return false;
  auto same = [](const ShapedArray& x, const ShapedArray& y) {
    return x.same_type(y) && x.weak_type == y.weak_type;
  };
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (!same(a.inputs[i].aval(), b.inputs[i].aval())) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (!same(a.outputs[i].aval(), b.outputs[i].aval())) return false;
  return true;
}

// The values of run [start, start+length) read only inside it, except `carry_out`, which only
// `allowed` (the next run's range, or anything when it is the last run) may read.
bool contained(const Jaxpr& body, size_t start, size_t length, const Var& carry_out,
               std::optional<std::pair<size_t, size_t>> next, const Dataflow& f) {
  for (size_t k = start; k < start + length; ++k)
    for (const Var& o : body.eqns[k].outputs) {
      auto r = f.readers.find(o.id());
      if (o == carry_out) {
        if (!next) continue;
        if (f.outvars.count(o.id())) return false;
        if (r != f.readers.end())
          for (size_t e : r->second)
            if (e < next->first || e >= next->second) return false;
        continue;
      }
      if (f.outvars.count(o.id())) return false;
      if (r != f.readers.end())
        for (size_t e : r->second)
          if (e < start || e >= start + length) return false;
    }
  return true;
}

// The chain starting at `start` with runs of `length` eqns (depth 0 when there is none).
Chain chain_at(const Jaxpr& body, size_t start, size_t length, const Dataflow& f) {
  Chain none;
  const size_t n = body.eqns.size();
  if (start + 2 * length > n) return none;
  // The template: run 1's input keys. Its `previous` inputs are the carry positions, and they
  // must all read one value.
  auto keys = [&](size_t run_start) {
    std::vector<std::vector<InputKey>> k;
    for (size_t e = 0; e < length; ++e) {
      k.emplace_back();
      for (const Atom& a : body.eqns[run_start + e].inputs)
        k.back().push_back(key_of(a, run_start, length, f));
    }
    return k;
  };
  for (size_t e = 0; e < length; ++e)
    if (!same_eqn_shape(body.eqns[start + e], body.eqns[start + length + e])) return none;
  const std::vector<std::vector<InputKey>> tmpl = keys(start + length);
  std::optional<InputKey> carry_key;
  for (const auto& eqn_keys : tmpl)
    for (const InputKey& k : eqn_keys) {
      if (k.source == Source::other) return none;
      if (k.source != Source::previous) continue;
      if (carry_key && !(*carry_key == k)) return none;  // two values from the previous run
      carry_key = k;
    }
  if (!carry_key) return none;
  // Run 0 reads its carry (any value from before it) where the template reads the previous run.
  const std::vector<std::vector<InputKey>> first = keys(start);
  std::optional<Var> carry0;
  for (size_t e = 0; e < length; ++e)
    for (size_t i = 0; i < tmpl[e].size(); ++i) {
      const Atom& a = body.eqns[start + e].inputs[i];
      if (tmpl[e][i].source == Source::previous) {
        if (!a.is_var() || first[e][i].source == Source::local) return none;
        if (carry0 && !(*carry0 == a.var())) return none;
        carry0 = a.var();
      } else if (!(first[e][i] == tmpl[e][i])) {
        return none;
      }
    }
  Chain c;
  c.first = start;
  c.length = length;
  c.carry.push_back(*carry0);
  auto carry_out = [&](size_t run_start) {
    return body.eqns[run_start + carry_key->offset].outputs[carry_key->output];
  };
  size_t runs = 1;
  while (start + (runs + 1) * length <= n) {
    const size_t rs = start + runs * length;
    bool ok = true;
    for (size_t e = 0; e < length && ok; ++e)
      ok = same_eqn_shape(body.eqns[start + e], body.eqns[rs + e]);
    if (!ok || keys(rs) != tmpl) break;
    ++runs;
  }
  // Every run's values stay inside it but for its carry, which only the next run reads.
  for (size_t r = 0; r < runs; ++r) {
    const size_t rs = start + r * length;
    std::optional<std::pair<size_t, size_t>> next;
    if (r + 1 < runs) next = std::make_pair(rs + length, rs + 2 * length);
    if (!contained(body, rs, length, carry_out(rs), next, f)) {
      runs = r;  // the chain ends before this run (its values escape)
      break;
    }
    c.carry.push_back(carry_out(rs));
  }
  if (runs < 2) return none;
  // (The last run's carry is the chain's result: anything after it may read it.)
  c.depth = runs;
  c.carry.resize(runs + 1);
  return c;
}

}  // namespace

std::optional<Chain> find_chain(const Jaxpr& body) {
  const size_t n = body.eqns.size();
  if (n < 2 || n > 4096) return std::nullopt;
  const Dataflow f = dataflow(body);
  std::optional<Chain> best;
  for (size_t length = 1; 2 * length <= n; ++length) {
    if (best && best->depth * length >= n) break;  // cannot have more runs
    for (size_t start = 0; start + 2 * length <= n; ++start) {
      Chain c = chain_at(body, start, length, f);
      if (c.depth >= 2 && (!best || c.depth > best->depth)) best = std::move(c);
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Nesting.

namespace {

class Nester {
 public:
  Nester(const Jaxpr& body, const Chain& c, const SplitRule& rule)
      : body_(body), c_(c), rule_(rule) {}

  // Emits runs [lo, hi) reversed with `slots` into `b`; `env` maps the values outside the runs
  // (and the carry into run lo) to atoms of `b`'s scope. Returns the carry out of run hi-1.
  Atom emit(JaxprBuilder& b, std::unordered_map<const void*, Atom>& env, size_t lo, size_t hi,
            size_t slots) const {
    if (hi - lo == 1) {
      for (size_t k = run_start(lo); k < run_start(lo) + c_.length; ++k) {
        Eqn e = body_.eqns[k];
        for (Atom& in : e.inputs) in = lookup(env, in);
        for (Var& o : e.outputs) {
          Var fresh = o.is_drop() ? Var::drop(o.aval()) : Var(o.aval());
          env.insert_or_assign(o.id(), Atom(fresh));
          o = fresh;
        }
        b.append(std::move(e));
      }
      return lookup(env, c_.carry[hi]);
    }
    if (slots == 0)
      throw Error(fmt::format("nest_chain: no snapshot slot left for {} steps", hi - lo));
    const size_t m = rule_(hi - lo, slots);
    if (m < 1 || m >= hi - lo)
      throw Error(fmt::format("nest_chain: split {} of {} steps is not inside", m, hi - lo));
    // The first m runs in a checkpoint of their own: its inputs are the carry and the outside
    // values they read.
    std::vector<Var> reads = outside_reads(lo, lo + m);
    std::unordered_map<const void*, Atom> inner_env;
    std::vector<Var> invars;
    std::vector<Atom> args;
    for (const Var& v : reads) {
      invars.emplace_back(v.aval());
      inner_env.emplace(v.id(), Atom(invars.back()));
      args.push_back(lookup(env, v));
    }
    JaxprBuilder ib;
    Atom out = emit(ib, inner_env, lo, lo + m, slots);
    Jaxpr inner = ib.build(std::move(invars), {out});
    Params params{{"differentiated", false},
                  {"jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(inner)))},
                  {"policy", NoneParam{}},
                  {"prevent_cse", true}};
    // The snapshot's residual line names the layer that produces it.
    const SourceInfo saved = b.source();
    b.set_source(body_.eqns[run_start(lo + m) - c_.length + carry_offset()].source);
    std::vector<Var> outs = b.emit("remat2", std::move(args), std::move(params));
    b.set_source(saved);
    env.insert_or_assign(c_.carry[lo + m].id(), Atom(outs.at(0)));
    return emit(b, env, lo + m, hi, slots - 1);
  }

 private:
  size_t run_start(size_t r) const { return c_.first + r * c_.length; }
  // Which eqn of a run produces its carry.
  size_t carry_offset() const {
    for (size_t e = 0; e < c_.length; ++e)
      for (const Var& o : body_.eqns[run_start(0) + e].outputs)
        if (o == c_.carry[1]) return e;
    return c_.length - 1;
  }

  static Atom lookup(const std::unordered_map<const void*, Atom>& env, const Atom& a) {
    if (a.is_literal()) return a;
    auto it = env.find(a.var().id());
    return it == env.end() ? a : it->second;
  }

  // The carry into run lo, then the other values runs [lo, hi) read that they do not produce,
  // in first-read order.
  std::vector<Var> outside_reads(size_t lo, size_t hi) const {
    std::unordered_set<const void*> inside, seen{c_.carry[lo].id()};
    std::vector<Var> reads{c_.carry[lo]};
    for (size_t k = run_start(lo); k < run_start(hi); ++k) {
      for (const Atom& in : body_.eqns[k].inputs)
        if (in.is_var() && !inside.count(in.var().id()) && seen.insert(in.var().id()).second)
          reads.push_back(in.var());
      for (const Var& o : body_.eqns[k].outputs) inside.insert(o.id());
    }
    return reads;
  }

  const Jaxpr& body_;
  const Chain& c_;
  const SplitRule& rule_;
};

}  // namespace

Jaxpr nest_chain(const Jaxpr& body, const Chain& chain, size_t slots, const SplitRule& rule) {
  if (chain.depth < 2 || chain.carry.size() != chain.depth + 1 ||
      chain.first + chain.depth * chain.length > body.eqns.size())
    throw Error("nest_chain: the chain does not fit the body");
  if (slots == 0) throw Error("nest_chain: at least one snapshot slot is needed");
  JaxprBuilder b;
  std::unordered_map<const void*, Atom> env;
  for (size_t k = 0; k < chain.first; ++k) b.append(body.eqns[k]);
  Nester nester(body, chain, rule);
  Atom last = nester.emit(b, env, 0, chain.depth, slots);
  env.insert_or_assign(chain.carry[chain.depth].id(), last);
  auto lookup = [&](const Atom& a) {
    if (a.is_literal()) return a;
    auto it = env.find(a.var().id());
    return it == env.end() ? a : it->second;
  };
  for (size_t k = chain.first + chain.depth * chain.length; k < body.eqns.size(); ++k) {
    Eqn e = body.eqns[k];
    for (Atom& in : e.inputs) in = lookup(in);
    b.append(std::move(e));
  }
  std::vector<Atom> outs;
  for (const Atom& o : body.outvars) outs.push_back(lookup(o));
  Jaxpr out = b.build(body.invars, std::move(outs), body.constvars, body.consts);
  out.debug = body.debug;
  return out;
}

}  // namespace cjax::memory
