// Literal values: `3.0`, `2`, `True`, `nan`, `-inf`, `9.999999974752427e-07`, typed (`:f32[]`)
// or not; range checks against the dtype they get.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "ir/parse/jaxpr_parser.h"

namespace cjax::parse {
namespace {

using Kind = UntypedLiteral::Kind;

struct IntRange {
  int64_t lo;
  uint64_t hi;
};

IntRange range_of(DType t) {
  switch (t) {
    case DType::i8:
      return {INT8_MIN, INT8_MAX};
    case DType::i16:
      return {INT16_MIN, INT16_MAX};
    case DType::i32:
      return {INT32_MIN, INT32_MAX};
    case DType::i64:
      return {INT64_MIN, INT64_MAX};
    case DType::u8:
      return {0, UINT8_MAX};
    case DType::u16:
      return {0, UINT16_MAX};
    case DType::u32:
      return {0, UINT32_MAX};
    case DType::u64:
      return {0, UINT64_MAX};
    default:
      return {0, 0};
  }
}

bool int_fits(int64_t v, DType t) {
  IntRange r = range_of(t);
  if (v < r.lo) return false;
  return v < 0 || static_cast<uint64_t>(v) <= r.hi;
}

std::string type_str(DType t) {
  return ShapedArray(t, {}).str_short();
}

// Whether a float value is representable (as a finite value, or as itself) in dtype `t`; values
// past the largest f32 cannot be narrowed to f32, f16 or bf16 without undefined behaviour.
bool float_fits(double v, DType t) {
  if (!is_floating(t)) return false;
  return t == DType::f64 || !std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max();
}

}  // namespace

LiteralValue JaxprParser::parse_literal_value(const Token& t) const {
  LiteralValue v;
  std::string_view s = t.text;
  if (s == "True" || s == "False") {
    v.kind = Kind::boolean;
    v.b = s == "True";
    return v;
  }
  if (s == "nan" || s == "inf" || s == "-inf") {
    v.kind = Kind::floating;
    v.d = s == "nan" ? std::numeric_limits<double>::quiet_NaN()
                     : (s[0] == '-' ? -HUGE_VAL : HUGE_VAL);
    return v;
  }
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (s.find_first_of(".eE") != std::string_view::npos) {
    v.kind = Kind::floating;
    auto [ptr, ec] = std::from_chars(first, last, v.d);
    if (ec != std::errc() || ptr != last)
      fail(t.offset, fmt::format("float literal {} is out of range", s));
    return v;
  }
  v.kind = Kind::integer;
  auto [ptr, ec] = std::from_chars(first, last, v.i);
  if (ec == std::errc() && ptr == last) return v;
  if (s[0] != '-') {
    auto [uptr, uec] = std::from_chars(first, last, v.u);
    if (uec == std::errc() && uptr == last) {
      v.big_unsigned = true;
      return v;
    }
  }
  fail(t.offset, fmt::format("integer literal {} is out of range", s));
}

Literal JaxprParser::typed_literal(const LiteralValue& v, const ShapedArray& aval,
                                   const Token& t) const {
  if (!aval.shape.empty())
    fail(t.offset, fmt::format("literal {} must be a scalar, got type {} (array constants print "
                               "as [...])",
                               t.text, aval.str_short()));
  DType d = aval.dtype;
  if (d == DType::opaque)
    fail(t.offset, fmt::format("literal {} cannot have type {}", t.text, aval.str_short()));
  Literal l;
  switch (v.kind) {
    case Kind::boolean:
      if (d != DType::bool_)
        fail(t.offset, fmt::format("literal {} cannot have type {}", t.text, aval.str_short()));
      l = Literal::of_bool(v.b);
      break;
    case Kind::integer:
      if (d == DType::bool_)
        fail(t.offset, fmt::format("literal {} cannot have type {}", t.text, aval.str_short()));
      if (is_floating(d)) {
        l = Literal::of(v.big_unsigned ? static_cast<double>(v.u) : static_cast<double>(v.i), d);
      } else if (v.big_unsigned) {
        if (d != DType::u64)
          fail(t.offset,
               fmt::format("integer literal {} is out of range for {}", t.text, type_str(d)));
        l.aval = ShapedArray(d, {});
        l.value = v.u;
      } else {
        if (!int_fits(v.i, d))
          fail(t.offset,
               fmt::format("integer literal {} is out of range for {}", t.text, type_str(d)));
        l = Literal::of_int(v.i, d);
      }
      break;
    case Kind::floating:
      if (!is_floating(d))
        fail(t.offset,
             fmt::format("float literal {} cannot have type {}", t.text, aval.str_short()));
      if (!float_fits(v.d, d))
        fail(t.offset, fmt::format("float literal {} is out of range for {}", t.text, type_str(d)));
      l = Literal::of(v.d, d);
      break;
  }
  l.aval.annotations = aval.annotations;
  return l;
}

bool JaxprParser::fits(const UntypedLiteral& u, DType dtype) const {
  switch (u.kind) {
    case Kind::boolean:
      return dtype == DType::bool_;
    case Kind::integer:
      return is_floating(dtype) || (is_integer(dtype) && int_fits(u.i, dtype));
    case Kind::floating:
      return float_fits(u.d, dtype);
  }
  return false;
}

DType JaxprParser::default_dtype(const UntypedLiteral& u) const {
  switch (u.kind) {
    case Kind::boolean:
      return DType::bool_;
    case Kind::integer:
      return int_fits(u.i, DType::i32) ? DType::i32 : DType::i64;
    case Kind::floating:
      return float_fits(u.d, DType::f32) ? DType::f32 : DType::f64;
  }
  return DType::f32;
}

Literal JaxprParser::untyped_literal_as(const UntypedLiteral& u, DType dtype) const {
  Literal l;
  switch (u.kind) {
    case Kind::boolean:
      l = Literal::of_bool(u.b);
      break;
    case Kind::integer:
      l = is_floating(dtype) ? Literal::of(static_cast<double>(u.i), dtype, true)
                             : Literal::of_int(u.i, dtype, true);
      break;
    case Kind::floating:
      l = Literal::of(u.d, dtype, true);
      break;
  }
  // Older JAX printed Python scalars (weakly typed) without a type.
  l.aval.weak_type = true;
  return l;
}

}  // namespace cjax::parse
