#include "passes/cotangent_sums.h"

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/errors.h"
#include "ir/primitive.h"
#include "ir/sub_jaxprs.h"
#include "passes/control_flow/cf_util.h"
#include "passes/util.h"

namespace cjax {
namespace {

// Where each variable of one jaxpr is defined (eqn index; invars are not in the map) and how many
// times it is read (outvars included).
struct Uses {
  std::unordered_map<const void*, size_t> def;
  std::unordered_map<const void*, size_t> reads;

  explicit Uses(const Jaxpr& j) {
    for (size_t i = 0; i < j.eqns.size(); ++i) {
      for (const Atom& a : j.eqns[i].inputs)
        if (a.is_var()) ++reads[a.var().id()];
      for (const Var& v : j.eqns[i].outputs) def[v.id()] = i;
    }
    for (const Atom& a : j.outvars)
      if (a.is_var()) ++reads[a.var().id()];
  }
  bool read_once(const Atom& a) const {
    if (!a.is_var()) return false;
    auto it = reads.find(a.var().id());
    return it != reads.end() && it->second == 1;
  }
  // Whether `a` exists before eqn `eqn` runs.
  bool defined_before(const Atom& a, size_t eqn) const {
    if (!a.is_var()) return true;
    auto it = def.find(a.var().id());
    return it == def.end() || it->second < eqn;
  }
};

bool is_zero_literal(const Atom& a) {
  return a.is_literal() && !a.literal().elided && !a.literal().array_constant &&
         a.literal().as_double() == 0.0;
}

// A zero array as the vjp instantiates one: a literal 0, or broadcast_in_dim of one.
bool is_zero(const Jaxpr& j, const Uses& u, const Atom& a) {
  if (is_zero_literal(a)) return true;
  if (!a.is_var()) return false;
  auto it = u.def.find(a.var().id());
  if (it == u.def.end()) return false;
  const Eqn& e = j.eqns[it->second];
  return e.prim->name == "broadcast_in_dim" && e.inputs.size() == 1 && is_zero_literal(e.inputs[0]);
}

// Where a running sum starts, seen from one of its values: a zero operand of an eqn of this
// jaxpr (`operand` of `eqn`), a first term there (a value that is no such sum, taken whole), a
// zero or first term inside the body of the remat2 `eqn` (for its output `output`), or an invar
// of this jaxpr (the accumulating carry of a scan body).
struct Base {
  enum class Kind { zero, term, inner, invar } kind;
  size_t eqn = 0, operand = 0, output = 0, invar = 0;
  // A scan continues the sum: the only case worth handing it the running sum.
  bool through_scan = false;
};

size_t param_count(const Eqn& e, const char* key) {
  return static_cast<size_t>(e.params.get_int(key));
}

const Jaxpr& body_of(const Eqn& e) {
  return *e.params.get_jaxpr("jaxpr");
}

std::optional<Base> base_of(const Jaxpr& j, const Uses& u, const Atom& value);

// The base of the sum continued by operand `operand` of eqn `eqn`: a zero, the base of a value
// read only by this link, or the operand itself as the first term.
std::optional<Base> operand_base(const Jaxpr& j, const Uses& u, size_t eqn, size_t operand) {
  const Atom& a = j.eqns[eqn].inputs[operand];
  if (is_zero(j, u, a)) return Base{.kind = Base::Kind::zero, .eqn = eqn, .operand = operand};
  if (!a.is_var()) return std::nullopt;
  if (u.read_once(a))
    if (std::optional<Base> b = base_of(j, u, a);
        b && (b->through_scan || b->kind == Base::Kind::invar))
      return b;
  return Base{.kind = Base::Kind::term, .eqn = eqn, .operand = operand};
}

// The base of the sum `body` returns as output `out`, followed inside the body.
std::optional<Base> body_output_base(const Jaxpr& body, size_t out) {
  const Uses bu(body);
  if (!bu.read_once(body.outvars[out])) return std::nullopt;
  return base_of(body, bu, body.outvars[out]);
}

std::optional<Base> base_of(const Jaxpr& j, const Uses& u, const Atom& value) {
  if (!value.is_var()) return std::nullopt;
  const Var& v = value.var();
  auto it = u.def.find(v.id());
  if (it == u.def.end()) {
    for (size_t i = 0; i < j.invars.size(); ++i)
      if (j.invars[i] == v) return Base{.kind = Base::Kind::invar, .invar = i};
    return std::nullopt;  // a constvar
  }
  const size_t at = it->second;
  const Eqn& e = j.eqns[at];
  size_t out = 0;
  while (!(e.outputs[out] == v)) ++out;
  const std::string& prim = e.prim->name;
  if (prim == "add_any") {
    // add_any(acc, new) as a transpose accumulates: the side that continues a sum.
    for (size_t side : {size_t{0}, size_t{1}})
      if (std::optional<Base> b = operand_base(j, u, at, side);
          b && (b->through_scan || b->kind == Base::Kind::invar))
        return b;
    return std::nullopt;
  }
  if (prim == "scan") {
    const size_t nc = param_count(e, "num_consts"), nk = param_count(e, "num_carry");
    if (out >= nk) return std::nullopt;
    // The carry accumulates: the body's new value is a sum continuing its old one.
    std::optional<Base> inner = body_output_base(body_of(e), out);
    if (!inner || inner->kind != Base::Kind::invar || inner->invar != nc + out) return std::nullopt;
    std::optional<Base> b = operand_base(j, u, at, nc + out);
    if (b) b->through_scan = true;
    return b;
  }
  if (prim == "remat2") {
    const Jaxpr& body = body_of(e);
    if (!body.constvars.empty()) return std::nullopt;
    std::optional<Base> inner = body_output_base(body, out);
    if (!inner) return std::nullopt;
    if (inner->kind == Base::Kind::invar) {
      std::optional<Base> b = operand_base(j, u, at, inner->invar);
      if (b) b->through_scan |= inner->through_scan;
      return b;
    }
    if (!inner->through_scan) return std::nullopt;
    return Base{.kind = Base::Kind::inner, .eqn = at, .output = out, .through_scan = true};
  }
  return std::nullopt;
}

class Threader {
 public:
  Jaxpr run(const Jaxpr& j) {
    Jaxpr out = j;
    for (Eqn& e : out.eqns) e.params = map_bodies(e.params);
    thread_sums(out);
    return out;
  }

 private:
  // Rewritten bodies by the original's address, so a body shared by several eqns stays shared.
  std::unordered_map<const Jaxpr*, JaxprRef> rewritten_;
  std::map<std::pair<const Jaxpr*, size_t>, JaxprRef> seeded_;

  JaxprRef rewrite(const JaxprRef& body) {
    auto [it, fresh] = rewritten_.try_emplace(body.get());
    if (fresh) it->second = std::make_shared<const Jaxpr>(run(*body));
    return it->second;
  }

  Params map_bodies(const Params& params) {
    auto map = [&](const ParamValue& v) -> ParamValue {
      if (v.is<JaxprRef>() && v.as<JaxprRef>()) return rewrite(v.as<JaxprRef>());
      return v;
    };
    Params out;
    for (const auto& [key, value] : params) {
      if (const std::vector<ParamValue>* items = param_items(value)) {
        std::vector<ParamValue> mapped;
        for (const ParamValue& item : *items) mapped.push_back(map(item));
        out.set(key, value.is<ParamTuple>() ? ParamValue(ParamTuple{std::move(mapped)})
                                            : ParamValue(ParamList{std::move(mapped)}));
      } else {
        out.set(key, map(value));
      }
    }
    return out;
  }

  // `body` taking one more invar, last, that its output `out` starts from instead of its zero.
  JaxprRef seeded_body(const JaxprRef& body, size_t out) {
    auto [it, fresh] = seeded_.try_emplace({body.get(), out});
    if (!fresh) return it->second;
    Jaxpr b = *body;
    const Uses u(b);
    const std::optional<Base> base = base_of(b, u, b.outvars[out]);
    Var seed(b.outvars[out].aval());
    seed_at(b, *base, seed);
    b.invars.push_back(seed);
    drop_unread_zeros(b);
    it->second = std::make_shared<const Jaxpr>(std::move(b));
    return it->second;
  }

  // The sum at `base` starts from `seed`: a zero replaced by it, a first term added to it.
  void seed_at(Jaxpr& j, const Base& base, const Atom& seed) {
    Eqn& e = j.eqns[base.eqn];
    switch (base.kind) {
      case Base::Kind::zero:
        e.inputs[base.operand] = seed;
        return;
      case Base::Kind::term: {
        Eqn sum = cf::make_eqn("add_any", {seed, e.inputs[base.operand]}, {}, e.source);
        e.inputs[base.operand] = sum.outputs[0];
        j.eqns.insert(j.eqns.begin() + static_cast<std::ptrdiff_t>(base.eqn), std::move(sum));
        return;
      }
      case Base::Kind::inner:
        e.params.set("jaxpr", seeded_body(e.params.get_jaxpr("jaxpr"), base.output));
        e.inputs.push_back(seed);
        return;
      case Base::Kind::invar:
        throw Error("sum_cotangents_in_order: an invar has no start to seed");
    }
  }

  // Each `z = add_any x y` whose `y` is a sum a scan continues: that sum starts from `x`, and
  // `z` is `y`.
  void thread_sums(Jaxpr& j) {
    std::optional<Uses> u;
    for (size_t i = 0; i < j.eqns.size(); ++i) {
      if (j.eqns[i].prim->name != "add_any" || j.eqns[i].inputs.size() != 2) continue;
      if (!u) u.emplace(j);
      for (size_t side : {size_t{1}, size_t{0}}) {
        const Eqn& e = j.eqns[i];
        const Atom x = e.inputs[1 - side], y = e.inputs[side];
        if (!u->read_once(y) || !x.aval().same_type(y.aval())) continue;
        std::optional<Base> base = base_of(j, *u, y);
        if (!base || !base->through_scan || base->kind == Base::Kind::invar ||
            !u->defined_before(x, base->eqn))
          continue;
        const Var z = e.outputs[0];
        seed_at(j, *base, x);  // may insert an eqn before this one
        std::erase_if(j.eqns,
                      [&](const Eqn& d) { return d.outputs.size() == 1 && d.outputs[0] == z; });
        replace_reads(j, z, y);
        u.reset();
        i = base->eqn;  // everything before the seeded eqn is as it was
        break;
      }
    }
    drop_unread_zeros(j);
  }

  static void replace_reads(Jaxpr& j, const Var& from, const Atom& to) {
    for (Eqn& e : j.eqns)
      for (Atom& a : e.inputs)
        if (a.is_var() && a.var() == from) a = to;
    for (Atom& a : j.outvars)
      if (a.is_var() && a.var() == from) a = to;
  }

  // The zeros a seeded sum no longer starts from.
  static void drop_unread_zeros(Jaxpr& j) {
    const Uses u(j);
    std::erase_if(j.eqns, [&](const Eqn& e) {
      return e.prim->name == "broadcast_in_dim" && e.outputs.size() == 1 &&
             !u.reads.count(e.outputs[0].id()) && is_zero_literal(e.inputs[0]);
    });
  }
};

}  // namespace

Jaxpr sum_cotangents_in_order(const Jaxpr& program) {
  return Threader().run(program);
}

}  // namespace cjax
