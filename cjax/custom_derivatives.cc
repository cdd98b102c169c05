#include "cjax/custom_derivatives.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "cjax/bind.h"
#include "cjax/numpy.h"

namespace cjax {
namespace {

// The symbolic zeros and unperturbed arguments of the rule being traced on this thread.
struct SymbolicMarks {
  std::vector<Array> zeros, unperturbed;
};
thread_local SymbolicMarks* active_marks = nullptr;

// A rule's name as a SourceInfo function name: kept for the life of the process.
const char* interned(const std::string& name) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard lock(mu);
  return names.insert(name).first->c_str();
}

bool holds(const std::vector<Array>& xs, const Array& x) {
  return std::any_of(xs.begin(), xs.end(), [&](const Array& y) { return y.id() == x.id(); });
}

}  // namespace

bool is_symbolic_zero(const Array& t) {
  return active_marks && holds(active_marks->zeros, t);
}

bool is_perturbed(const Array& x) {
  return !(active_marks && holds(active_marks->unperturbed, x));
}

namespace detail {

// Each scope has its own marks (a rule traced inside another's sees only its own); the
// enclosing scope's come back when it ends.
class SymbolicZeroScope::Marks : public SymbolicMarks {
 public:
  SymbolicMarks* saved = nullptr;
};

SymbolicZeroScope::SymbolicZeroScope() : marks_(std::make_unique<Marks>()) {
  marks_->saved = active_marks;
  active_marks = marks_.get();
}

SymbolicZeroScope::~SymbolicZeroScope() {
  active_marks = marks_->saved;
}

Array SymbolicZeroScope::zero(const ShapedArray& aval) {
  Array z = numpy::zeros(aval.shape, aval.dtype);
  marks_->zeros.push_back(z);
  return z;
}

void SymbolicZeroScope::unperturbed(const Array& x) {
  marks_->unperturbed.push_back(x);
}

std::vector<Array> with_symbolic_zeros(std::span<const Array> given,
                                       std::span<const ShapedArray> avals,
                                       std::span<const bool> zeros, SymbolicZeroScope& scope) {
  std::vector<Array> out;
  size_t next = 0;
  for (size_t i = 0; i < avals.size(); ++i)
    out.push_back(zeros[i] ? scope.zero(avals[i]) : given[next++]);
  return out;
}

Array add_tangents(const Array& a, const Array& b) {
  return cjax::bind("add_any", std::vector<Array>{a, b}, {}, std::source_location::current()).at(0);
}

Array zeros_like(const Array& x) {
  return numpy::zeros_like(x);
}

std::vector<ShapedArray> leaf_avals(std::span<const Array> leaves) {
  std::vector<ShapedArray> out;
  for (const Array& x : leaves) out.push_back(x.aval());
  return out;
}

CustomBody custom_body(ClosedTrace closed) {
  // JAX's closure conversion: the captured values become the leading operands.
  Jaxpr j = std::move(closed.jaxpr);
  convert_constvars(j);
  j.debug = nullptr;
  return {std::make_shared<const Jaxpr>(std::move(j)), std::move(closed.consts)};
}

Jaxpr trace_rule(std::span<const ShapedArray> avals, const FlatBody& body, const std::string& what,
                 const std::string& rule_name) {
  EagerScope fresh;  // a rule is traced on its own, whatever trace the pass runs under
  ClosedTrace closed = trace_to_jaxpr(body, avals);
  if (!closed.jaxpr.constvars.empty())
    throw UsageError(fmt::format(
        "{} captures {} array value(s) (the first {}); a rule may capture C++ numbers but not "
        "arrays: pass them as arguments of the function",
        what, closed.jaxpr.constvars.size(), closed.jaxpr.constvars[0].aval().str_short()));
  closed.jaxpr.debug = nullptr;
  if (rule_name != "<lambda>") {
    const char* name = interned(rule_name);
    for (Eqn& e : closed.jaxpr.eqns)
      if (short_function_name(e.source.function).ends_with("<lambda>")) e.source.function = name;
  }
  return std::move(closed.jaxpr);
}

std::vector<Array> bind_custom_call(const char* prim, const CustomBody& body,
                                    std::span<const Array> leaves, Params params,
                                    const SourceInfo& src) {
  std::vector<Array> inputs = body.consts;
  inputs.insert(inputs.end(), leaves.begin(), leaves.end());
  return cjax::bind(prim, inputs, std::move(params), src);
}

}  // namespace detail
}  // namespace cjax
