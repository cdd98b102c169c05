// Arithmetic operators on cjax::Array (a + b, a * 2.0, -a, a < b, ...), as jax.Array's dunder
// methods: `a + b` is jnp.add(a, b), `2.0 * a` is jnp.multiply(2.0, a).
//
// Operators cannot take a defaulted std::source_location parameter, so each operand is an
// `Operand`, whose implicit converting constructor captures the call site. With g++ 12 the
// location is the line and column of the *last token of the right operand*
// (`y = a * b;` -> the column of `b`; `-x` -> the column of `x`; `(a + b) * c` -> `c`), and for
// an expression spread over lines, the line of that token. The named functions (np::multiply)
// report the column of their opening parenthesis.
// == and != are not overloaded (they would compare identity in C++ code); use np::equal.
#pragma once

#include <source_location>
#include <type_traits>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax {

class Operand {
 public:
  Operand(const Array& a, std::source_location loc = std::source_location::current())  // NOLINT
      : value_(a), src_(loc) {}
  template <class T>
  requires std::is_arithmetic_v<T> Operand(
      T v, std::source_location loc = std::source_location::current())  // NOLINT
      : value_(v), src_(loc) {}

  const Array& value() const { return value_; }
  const SourceInfo& src() const { return src_; }

 private:
  Array value_;
  SourceInfo src_;
};

Array operator+(const Operand& a, const Operand& b);
Array operator-(const Operand& a, const Operand& b);
Array operator*(const Operand& a, const Operand& b);
Array operator/(const Operand& a, const Operand& b);
Array operator<(const Operand& a, const Operand& b);
Array operator<=(const Operand& a, const Operand& b);
Array operator>(const Operand& a, const Operand& b);
Array operator>=(const Operand& a, const Operand& b);
Array operator&&(const Operand& a, const Operand& b);  // jnp.logical_and
Array operator||(const Operand& a, const Operand& b);  // jnp.logical_or
Array operator-(const Operand& a);                     // jnp.negative
Array operator+(const Operand& a);                     // jnp.positive
Array operator!(const Operand& a);                     // jnp.logical_not

Array& operator+=(Array& a, const Operand& b);
Array& operator-=(Array& a, const Operand& b);
Array& operator*=(Array& a, const Operand& b);
Array& operator/=(Array& a, const Operand& b);

}  // namespace cjax
