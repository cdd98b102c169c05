#include "compiler/cpu/segments.h"

#include <unordered_map>

#include <fmt/format.h>

#include "ir/exact_text.h"
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

}  // namespace

size_t count_eqns(const Jaxpr& jaxpr) {
  size_t n = jaxpr.eqns.size();
  for (const Eqn& e : jaxpr.eqns)
    for (const auto& [key, value] : e.params)
      for_each_jaxpr(value, [&](const Jaxpr& j) { n += count_eqns(j); });
  return n;
}

std::vector<Segment> split_into_segments(
    const Jaxpr& jaxpr, size_t max_eqns,
    const std::function<bool(const Eqn& previous, const Eqn& next)>& cuts_between) {
  const size_t n = jaxpr.eqns.size();
  const std::unordered_map<const void*, size_t> last_use = last_reads(jaxpr);

  std::vector<Segment> segments;
  std::unordered_map<const void*, size_t> defined_in;  // variable -> its segment
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && end - begin < max_eqns && !cuts_between(jaxpr.eqns[end - 1], jaxpr.eqns[end]))
      ++end;
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

std::string segment_key(const Jaxpr& jaxpr, const Segment& s, size_t index) {
  std::vector<Atom> outputs(s.outputs.begin(), s.outputs.end());
  outputs.insert(outputs.end(), s.literals.begin(), s.literals.end());
  ExactTextWriter w;
  w.fragment(s.inputs, std::span<const Eqn>(jaxpr.eqns.data() + s.begin, jaxpr.eqns.data() + s.end),
             outputs);
  return w.exact() ? w.take() : fmt::format("#{}", index);
}

}  // namespace cjax::lower
