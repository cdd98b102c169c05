#include "ir/exact_text.h"

#include <fmt/format.h>

#include <variant>

#include "ir/gather_params.h"
#include "ir/primitive.h"

namespace cjax {
namespace {

std::string scalar(bool v) {
  return v ? "T" : "F";
}
std::string scalar(int64_t v) {
  return fmt::format("i{}", v);
}
std::string scalar(uint64_t v) {
  return fmt::format("u{}", v);
}
std::string scalar(double v) {
  return fmt::format("d{:a}", v);
}

}  // namespace

void ExactTextWriter::jaxpr(const Jaxpr& j, bool consts_are_inputs) {
  if (!j.consts.empty() && !consts_are_inputs) exact_ = false;
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

void ExactTextWriter::fragment(std::span<const Var> inputs, std::span<const Eqn> eqns,
                               std::span<const Atom> outputs) {
  Ids ids;
  out_ += "{|";
  for (const Var& v : inputs) define(v, ids);
  out_ += '|';
  for (const Eqn& e : eqns) eqn(e, ids);
  out_ += '|';
  for (const Atom& a : outputs) atom(a, ids);
  out_ += '}';
}

void ExactTextWriter::define(const Var& v, Ids& ids) {
  if (v.is_drop())
    out_ += '_';
  else
    ids.emplace(v.id(), ids.size());
  aval(v.aval());
  out_ += ' ';
}

void ExactTextWriter::eqn(const Eqn& e, Ids& ids) {
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

void ExactTextWriter::aval(const ShapedArray& a) {
  out_ += a.str_short();
  if (a.weak_type) out_ += 'w';
}

void ExactTextWriter::atom(const Atom& a, const Ids& ids) {
  if (a.is_var()) {
    auto it = ids.find(a.var().id());
    // A variable of an enclosing jaxpr cannot occur in a closed one; mark it all the same.
    out_ += it == ids.end() ? std::string("%?") : fmt::format("%{}", it->second);
  } else {
    const Literal& l = a.literal();
    if (l.elided) exact_ = false;  // parsed from `[...]`: its values are unknown
    out_ += '$';
    out_ += l.elided ? std::string("...") : std::visit([](auto v) { return scalar(v); }, l.value);
    out_ += ':';
    aval(l.aval);
  }
  out_ += ' ';
}

void ExactTextWriter::param(const ParamValue& v) {
  if (v.is<NoneParam>()) {
    out_ += "None";
  } else if (v.is<bool>()) {
    out_ += scalar(v.as<bool>());
  } else if (v.is<int64_t>()) {
    if (v.numpy_int) out_ += 'n';  // prints otherwise
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
  } else if (v.is<OpaqueParam>() && opaque_text_is_exact(v.as<OpaqueParam>().text)) {
    out_ += fmt::format("t{}:{}", v.as<OpaqueParam>().text.size(), v.as<OpaqueParam>().text);
  } else if ((v.is<PolicyRef>() || v.is<ObjectRef>()) && code_only_) {
    out_ += v.is<PolicyRef>() ? "p" : "o";
  } else if (v.is<PolicyRef>() && pinned_) {
    pinned_->push_back(v.as<PolicyRef>());
    out_ += fmt::format("p{}", static_cast<const void*>(v.as<PolicyRef>().get()));
  } else if (v.is<ObjectRef>() && pinned_) {
    pinned_->push_back(v.as<ObjectRef>());
    out_ += fmt::format("o{}", static_cast<const void*>(v.as<ObjectRef>().get()));
  } else {
    out_ += '?';
    exact_ = false;
  }
}

std::optional<std::string> exact_text(const Jaxpr& jaxpr) {
  ExactTextWriter w;
  w.jaxpr(jaxpr);
  if (!w.exact()) return std::nullopt;
  return w.take();
}

}  // namespace cjax
