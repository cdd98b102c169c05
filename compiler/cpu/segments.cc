#include "compiler/cpu/segments.h"

#include <unordered_map>

#include <fmt/format.h>

#include "ir/liveness.h"
#include "ir/primitive.h"

namespace cjax::lower {
namespace {

// Calls `f` on every jaxpr nested in `v` (tuples and lists of them too).
template <class F>
void for_each_jaxpr(const ParamValue& v, const F& f) {
  if (v.is<JaxprRef>() && v.as<JaxprRef>()) f(*v.as<JaxprRef>());
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  if (items)
    for (const ParamValue& item : *items) for_each_jaxpr(item, f);
}

// Whether `v` holds something printed text does not pin down.
bool has_unprinted_values(const ParamValue& v);

bool has_unprinted_values(const Jaxpr& j) {
  if (!j.consts.empty()) return true;
  for (const Eqn& e : j.eqns)
    for (const auto& [key, value] : e.params)
      if (has_unprinted_values(value)) return true;
  return false;
}

bool has_unprinted_values(const ParamValue& v) {
  if (v.is<PolicyRef>() || v.is<OpaqueParam>()) return true;
  bool found = false;
  for_each_jaxpr(v, [&](const Jaxpr& j) { found = found || has_unprinted_values(j); });
  return found;
}

// A segment's exact text for the function cache: avals, primitives, every parameter and literal
// value exactly (floats in hex), variables numbered by definition. Much cheaper than the pretty
// printer, which a deep network would otherwise run on thousands of segments.
class KeyWriter {
 public:
  std::string take() { return std::move(out_); }

  void jaxpr(const Jaxpr& j) {
    Ids ids;
    out_ += '{';
    for (const Var& v : j.constvars) define(v, ids);
    out_ += '|';
    for (const Var& v : j.invars) define(v, ids);
    out_ += '|';
    for (const Eqn& e : j.eqns) eqn(e, ids);
    out_ += '|';
    for (const Atom& a : j.outvars) atom(a, ids);
    out_ += '}';
  }

  // The same text as jaxpr(segment_program(j, s)).
  void segment(const Jaxpr& j, const Segment& s) {
    Ids ids;
    out_ += "{|";
    for (const Var& v : s.inputs) define(v, ids);
    out_ += '|';
    for (size_t i = s.begin; i < s.end; ++i) eqn(j.eqns[i], ids);
    out_ += '|';
    for (const Var& v : s.outputs) atom(v, ids);
    for (const Literal& l : s.literals) atom(l, ids);
    out_ += '}';
  }

 private:
  using Ids = std::unordered_map<const void*, size_t>;

  void define(const Var& v, Ids& ids) {
    if (v.is_drop()) {
      out_ += '_';
    } else {
      ids.emplace(v.id(), ids.size());
    }
    aval(v.aval());
    out_ += ' ';
  }

  void eqn(const Eqn& e, Ids& ids) {
    out_ += e.prim->name;
    out_ += '[';
    for (const auto& [key, value] : e.params) {
      out_ += key;
      out_ += '=';
      param(value);
      out_ += ',';
    }
    out_ += ']';
    for (const Atom& a : e.inputs) atom(a, ids);
    out_ += "->";
    for (const Var& v : e.outputs) define(v, ids);
    out_ += ';';
  }

  void aval(const ShapedArray& a) {
    out_ += a.str_short();
    if (a.weak_type) out_ += 'w';
  }

  void atom(const Atom& a, const Ids& ids) {
    if (a.is_var()) {
      auto it = ids.find(a.var().id());
      // A variable of an enclosing jaxpr cannot occur in a closed one; mark it all the same.
      out_ += it == ids.end() ? std::string("%?") : fmt::format("%{}", it->second);
    } else {
      const Literal& l = a.literal();
      out_ += '$';
      out_ += l.elided ? std::string("...") : std::visit([](auto v) { return scalar(v); }, l.value);
      out_ += ':';
      aval(l.aval);
    }
    out_ += ' ';
  }

  static std::string scalar(bool v) { return v ? "T" : "F"; }
  static std::string scalar(int64_t v) { return fmt::format("i{}", v); }
  static std::string scalar(uint64_t v) { return fmt::format("u{}", v); }
  static std::string scalar(double v) { return fmt::format("d{:a}", v); }

  void param(const ParamValue& v) {
    if (v.is<NoneParam>()) {
      out_ += "None";
    } else if (v.is<bool>()) {
      out_ += scalar(v.as<bool>());
    } else if (v.is<int64_t>()) {
      out_ += scalar(v.as<int64_t>());
    } else if (v.is<double>()) {
      out_ += scalar(v.as<double>());
    } else if (v.is<std::string>()) {
      out_ += fmt::format("s{}:{}", v.as<std::string>().size(), v.as<std::string>());
    } else if (v.is<DType>()) {
      out_ += short_name(v.as<DType>());
    } else if (v.is<ParamTuple>() || v.is<ParamList>()) {
      const bool tuple = v.is<ParamTuple>();
      out_ += tuple ? '(' : '[';
      for (const ParamValue& item : tuple ? v.as<ParamTuple>().items : v.as<ParamList>().items) {
        param(item);
        out_ += ',';
      }
      out_ += tuple ? ')' : ']';
    } else if (v.is<JaxprRef>() && v.as<JaxprRef>()) {
      jaxpr(*v.as<JaxprRef>());
    } else {
      out_ += "?";  // policies and opaque values: segment_key never shares such segments
    }
  }

  std::string out_;
};

}  // namespace

size_t count_eqns(const Jaxpr& jaxpr) {
  size_t n = jaxpr.eqns.size();
  for (const Eqn& e : jaxpr.eqns)
    for (const auto& [key, value] : e.params)
      for_each_jaxpr(value, [&](const Jaxpr& j) { n += count_eqns(j); });
  return n;
}

std::vector<Segment> split_into_segments(const Jaxpr& jaxpr, size_t max_eqns,
                                         const std::function<bool(const Eqn&)>& starts_segment) {
  const size_t n = jaxpr.eqns.size();
  const std::unordered_map<const void*, size_t> last_use = last_reads(jaxpr);

  std::vector<Segment> segments;
  std::unordered_map<const void*, size_t> defined_in;  // variable -> its segment
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && end - begin < max_eqns && !starts_segment(jaxpr.eqns[end])) ++end;
    Segment s{begin, end, {}, {}, {}};
    const size_t k = segments.size();
    for (size_t i = begin; i < end; ++i) {
      const Eqn& e = jaxpr.eqns[i];
      for (const Atom& a : e.inputs) {
        if (a.is_literal()) continue;
        // Defined before the segment (or an input of the program): one more input, once.
        auto [it, first] = defined_in.emplace(a.var().id(), k);
        if (first || it->second != k) {
          s.inputs.push_back(a.var());
          it->second = k;  // read once per segment
        }
      }
      for (const Var& v : e.outputs) {
        if (v.is_drop()) continue;
        defined_in[v.id()] = k;
        auto it = last_use.find(v.id());
        if (it != last_use.end() && it->second >= end) s.outputs.push_back(v);
      }
    }
    segments.push_back(std::move(s));
    begin = end;
  }
  Segment literals{n, n, {}, {}, {}};
  for (const Atom& a : jaxpr.outvars)
    if (a.is_literal()) literals.literals.push_back(a.literal());
  if (!literals.literals.empty()) segments.push_back(std::move(literals));
  return segments;
}

Jaxpr segment_program(const Jaxpr& jaxpr, const Segment& s) {
  Jaxpr p;
  std::unordered_map<const void*, Var> fresh;  // outer variable -> the segment's own
  for (const Var& v : s.inputs) {
    p.invars.emplace_back(v.aval());
    fresh.emplace(v.id(), p.invars.back());
  }
  for (size_t i = s.begin; i < s.end; ++i) {
    const Eqn& e = jaxpr.eqns[i];
    Eqn copy{e.prim, {}, {}, e.params, e.source};
    for (const Atom& a : e.inputs)
      copy.inputs.push_back(a.is_literal() ? a : Atom(fresh.at(a.var().id())));
    for (const Var& v : e.outputs) {
      copy.outputs.push_back(v.is_drop() ? Var::drop(v.aval()) : Var(v.aval()));
      fresh[v.id()] = copy.outputs.back();
    }
    p.eqns.push_back(std::move(copy));
  }
  for (const Var& v : s.outputs) p.outvars.push_back(fresh.at(v.id()));
  for (const Literal& l : s.literals) p.outvars.push_back(l);
  return p;
}

std::optional<std::string> exact_text(const Jaxpr& jaxpr) {
  if (has_unprinted_values(jaxpr)) return std::nullopt;
  KeyWriter w;
  w.jaxpr(jaxpr);
  return w.take();
}

std::string segment_key(const Jaxpr& jaxpr, const Segment& s, size_t index) {
  for (size_t i = s.begin; i < s.end; ++i)
    for (const auto& [key, value] : jaxpr.eqns[i].params)
      if (has_unprinted_values(value)) return fmt::format("#{}", index);
  KeyWriter w;
  w.segment(jaxpr, s);
  return w.take();
}

}  // namespace cjax::lower
