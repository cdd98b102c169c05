// Call bodies a program runs at more than one place. The CPU back end compiles each such body
// once, as a function its callers call, instead of copying it into every caller: a binomial scan
// schedule (passes/scan_schedules.h) checkpoints a few ranges of equal length thousands of times,
// and its gradient, expanded, held tens of thousands of eqns that compiled for minutes.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/jaxpr.h"

namespace cjax {

class RepeatedCalls {
 public:
  // A body this small is copied into its callers (where it fuses with what surrounds it).
  static constexpr size_t kMinEqns = 24;

  // The call-like eqns (ir/call_body.h) of `program`, at any depth, whose bodies are met at least
  // twice with the same exact text (ir/exact_text.h; bodies holding consts have none) and hold at
  // least `min_eqns` eqns, counting those of nested jaxprs. `program` must outlive this object.
  explicit RepeatedCalls(const Jaxpr& program, size_t min_eqns = kMinEqns);

  // The key (the exact text) of the body `call` runs, when it is one of the repeated ones; else
  // null. `call` is an eqn of the program this was made from, or of a body of one.
  const std::string* key(const Eqn& call);
  // How many distinct bodies are repeated.
  size_t size() const { return repeated_; }

 private:
  struct Body {
    size_t eqns = 0;   // counting nested jaxprs' eqns
    size_t calls = 0;  // in distinct contexts: the calls inside a repeated body count once
  };
  using Entry = std::pair<const std::string, Body>;
  // The entry of `body`'s text, made on first sight (with `added` set); null if it has none.
  Entry* entry_of(const Jaxpr& body, bool* added = nullptr);
  void count(const Jaxpr& j);

  size_t min_eqns_;
  size_t repeated_ = 0;
  std::unordered_map<const Jaxpr*, Entry*> by_jaxpr_;
  std::unordered_map<std::string, Body> by_text_;
};

}  // namespace cjax
