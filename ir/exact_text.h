// A jaxpr's exact text, the key of the caches that hold programs (the CPU back end's compiled
// programs and segments, grad's differentiated programs): avals with weak types, primitives,
// every parameter and literal value exactly (floats in hex), variables numbered in the order they
// are defined. Much cheaper to write than the pretty printer, and unlike it never elides a value.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

class ExactTextWriter {
 public:
  // Policies, opaque parameters and nested jaxprs' consts are values no text pins down: they make
  // the text inexact (see exact()). With `pinned`, policies and param objects (custom derivative
  // rules) are written by their identity instead and kept alive in `*pinned`, so that no other
  // one can take their address while a key holds it.
  explicit ExactTextWriter(std::vector<std::shared_ptr<const void>>* pinned = nullptr)
      : pinned_(pinned) {}

  // For the key of compiled code: policies and param objects (custom derivative rules) are
  // written as placeholders, and the text stays exact. Only autodiff reads them; the back ends
  // compile a checkpoint or a custom rule's call by its jaxpr alone.
  static ExactTextWriter for_compiled_code() {
    ExactTextWriter w;
    w.code_only_ = true;
    return w;
  }

  // With `consts_are_inputs`, j's own consts are values its caller passes (the text of its
  // constvars is all the key needs); otherwise they make the text inexact.
  void jaxpr(const Jaxpr& j, bool consts_are_inputs = false);
  // A fragment of a program as if it were one: its inputs, eqns and outputs.
  void fragment(std::span<const Var> inputs, std::span<const Eqn> eqns,
                std::span<const Atom> outputs);

  // Whether everything written was pinned down by the text.
  bool exact() const { return exact_; }
  std::string take() { return std::move(out_); }

 private:
  using Ids = std::unordered_map<const void*, size_t>;
  void define(const Var& v, Ids& ids);
  void eqn(const Eqn& e, Ids& ids);
  void aval(const ShapedArray& a);
  void atom(const Atom& a, const Ids& ids);
  void param(const ParamValue& v);

  std::vector<std::shared_ptr<const void>>* pinned_;
  bool code_only_ = false;
  bool exact_ = true;
  std::string out_;
};

// `jaxpr`'s exact text, or nothing when it holds values text cannot pin down (a policy, an opaque
// parameter, a nested jaxpr's consts, the jaxpr's own consts).
std::optional<std::string> exact_text(const Jaxpr& jaxpr);

}  // namespace cjax
