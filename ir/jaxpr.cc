#include "ir/jaxpr.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ir/errors.h"

namespace cjax {

Var::Var(ShapedArray aval) : node_(std::make_shared<Node>()) {
  node_->aval = std::move(aval);
}

Var Var::drop(ShapedArray aval) {
  Var v(std::move(aval));
  v.node_->dropped = true;
  return v;
}

namespace {

double round_to(double v, DType t) {
  switch (t) {
    case DType::f32:
      return static_cast<double>(static_cast<float>(v));
    case DType::f16:
    case DType::bf16:
      // Rounded to f32 here; the interpreter does not compute in half precision.
      return static_cast<double>(static_cast<float>(v));
    default:
      return v;
  }
}

}  // namespace

Literal Literal::of(double v, DType t, bool weak) {
  Literal l;
  l.aval = ShapedArray(t, {}, weak);
  if (is_floating(t))
    l.value = round_to(v, t);
  else if (t == DType::bool_)
    l.value = v != 0.0;
  else if (is_unsigned_integer(t))
    l.value = static_cast<uint64_t>(v);
  else
    l.value = static_cast<int64_t>(v);
  return l;
}

Literal Literal::of_int(int64_t v, DType t, bool weak) {
  if (is_floating(t)) return of(static_cast<double>(v), t, weak);
  Literal l;
  l.aval = ShapedArray(t, {}, weak);
  if (t == DType::bool_)
    l.value = v != 0;
  else if (is_unsigned_integer(t))
    l.value = static_cast<uint64_t>(v);
  else
    l.value = v;
  return l;
}

Literal Literal::of_bool(bool v) {
  Literal l;
  l.aval = ShapedArray(DType::bool_, {});
  l.value = v;
  return l;
}

double Literal::as_double() const {
  return std::visit([](auto x) { return static_cast<double>(x); }, value);
}

int64_t Literal::as_int() const {
  return std::visit([](auto x) { return static_cast<int64_t>(x); }, value);
}

std::string Literal::value_str() const {
  if (elided) return "[...]";
  struct {
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(uint64_t u) const { return std::to_string(u); }
    std::string operator()(double d) const { return python_float_repr(d); }
  } visitor;
  return std::visit(visitor, value);
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, e.g. "9.999999974752427e-07", "3e+00".
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  int exponent = std::atoi(sci.c_str() + e + 1);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  // Python's repr: fixed notation when -4 <= exponent < 16, else scientific.
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out.assign("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      size_t point = static_cast<size_t>(exponent + 1);
      out = fmt::format("{}.{}", digits.substr(0, point), digits.substr(point));
    }
  } else {
    std::string mantissa =
        digits.size() > 1 ? fmt::format("{}.{}", digits[0], digits.substr(1)) : digits.substr(0, 1);
    out = fmt::format("{}e{}{:02d}", mantissa, exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  if (negative) out.insert(out.begin(), '-');
  return out;
}

std::vector<ShapedArray> Jaxpr::in_avals() const {
  return avals_of(std::span<const Var>(invars));
}

std::vector<ShapedArray> Jaxpr::out_avals() const {
  return avals_of(std::span<const Atom>(outvars));
}

std::vector<ShapedArray> avals_of(std::span<const Atom> atoms) {
  std::vector<ShapedArray> out;
  out.reserve(atoms.size());
  for (const auto& a : atoms) out.push_back(a.aval());
  return out;
}

std::vector<ShapedArray> avals_of(std::span<const Var> vars) {
  std::vector<ShapedArray> out;
  out.reserve(vars.size());
  for (const auto& v : vars) out.push_back(v.aval());
  return out;
}

void convert_constvars(Jaxpr& jaxpr) {
  jaxpr.invars.insert(jaxpr.invars.begin(), jaxpr.constvars.begin(), jaxpr.constvars.end());
  jaxpr.constvars.clear();
  jaxpr.consts.clear();
}

}  // namespace cjax
