#include "passes/repeated_calls.h"

#include "ir/call_body.h"
#include "ir/exact_text.h"
#include "ir/sub_jaxprs.h"

namespace cjax {
namespace {

size_t eqns_in(const Jaxpr& j) {
  size_t n = j.eqns.size();
  for (const Eqn& e : j.eqns)
    for (const Jaxpr* sub : sub_jaxprs(e)) n += eqns_in(*sub);
  return n;
}

}  // namespace

RepeatedCalls::RepeatedCalls(const Jaxpr& program, size_t min_eqns) : min_eqns_(min_eqns) {
  count(program);
  for (const auto& [text, body] : by_text_)
    if (body.calls >= 2 && body.eqns >= min_eqns_) ++repeated_;
}

RepeatedCalls::Entry* RepeatedCalls::entry_of(const Jaxpr& body, bool* added) {
  if (added) *added = false;
  auto [seen, first_sight] = by_jaxpr_.try_emplace(&body, nullptr);
  if (!first_sight) return seen->second;
  // Policies are written as placeholders: the compiled code does not depend on them.
  ExactTextWriter w = ExactTextWriter::for_compiled_code();
  w.jaxpr(body);
  if (!w.exact()) return nullptr;
  auto [entry, fresh] = by_text_.try_emplace(w.take());
  if (fresh) entry->second.eqns = eqns_in(body);
  if (added) *added = fresh;
  return seen->second = &*entry;
}

// A body's calls are counted on its first sight only: once the body is compiled as a function,
// what it calls is compiled within that function, once.
void RepeatedCalls::count(const Jaxpr& j) {
  for (const Eqn& e : j.eqns) {
    if (const Jaxpr* body = call_body(e)) {
      bool added = false;
      Entry* entry = entry_of(*body, &added);
      if (entry) ++entry->second.calls;
      if (entry && !added) continue;
    }
    for (const Jaxpr* sub : sub_jaxprs(e)) count(*sub);
  }
}

const std::string* RepeatedCalls::key(const Eqn& call) {
  const Jaxpr* body = call_body(call);
  if (!body || repeated_ == 0) return nullptr;
  const Entry* entry = entry_of(*body);
  if (!entry || entry->second.calls < 2 || entry->second.eqns < min_eqns_) return nullptr;
  return &entry->first;
}

}  // namespace cjax
