#include "cjax/operators.h"

#include "cjax/numpy.h"

namespace cjax {

Array operator+(const Operand& a, const Operand& b) {
  return numpy::add(a.value(), b.value(), a.src());
}
Array operator-(const Operand& a, const Operand& b) {
  return numpy::subtract(a.value(), b.value(), a.src());
}
Array operator*(const Operand& a, const Operand& b) {
  return numpy::multiply(a.value(), b.value(), a.src());
}
Array operator/(const Operand& a, const Operand& b) {
  return numpy::true_divide(a.value(), b.value(), a.src());
}
Array operator<(const Operand& a, const Operand& b) {
  return numpy::less(a.value(), b.value(), a.src());
}
Array operator<=(const Operand& a, const Operand& b) {
  return numpy::less_equal(a.value(), b.value(), a.src());
}
Array operator>(const Operand& a, const Operand& b) {
  return numpy::greater(a.value(), b.value(), a.src());
}
Array operator>=(const Operand& a, const Operand& b) {
  return numpy::greater_equal(a.value(), b.value(), a.src());
}
Array operator&&(const Operand& a, const Operand& b) {
  return numpy::logical_and(a.value(), b.value(), a.src());
}
Array operator||(const Operand& a, const Operand& b) {
  return numpy::logical_or(a.value(), b.value(), a.src());
}
Array operator-(const Operand& a) {
  return numpy::negative(a.value(), a.src());
}
Array operator+(const Operand& a) {
  return numpy::positive(a.value(), a.src());
}
Array operator!(const Operand& a) {
  return numpy::logical_not(a.value(), a.src());
}

Array& operator+=(Array& a, const Operand& b) {
  return a = numpy::add(a, b.value(), b.src());
}
Array& operator-=(Array& a, const Operand& b) {
  return a = numpy::subtract(a, b.value(), b.src());
}
Array& operator*=(Array& a, const Operand& b) {
  return a = numpy::multiply(a, b.value(), b.src());
}
Array& operator/=(Array& a, const Operand& b) {
  return a = numpy::true_divide(a, b.value(), b.src());
}

}  // namespace cjax
