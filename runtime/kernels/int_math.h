// Integer arithmetic with XLA's results and no undefined behaviour: two's-complement wrap-around
// on overflow; division by zero gives -1 (all ones), remainder by zero gives the dividend;
// INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace cjax::runtime {

template <class T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote small types to unsigned int so that the product cannot overflow a signed int.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(
      static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}
template <class T>
T wrap_neg(T a) {
  return wrap_sub(T{0}, a);
}

template <class T>
T int_div(T a, T b) {
  if (b == 0) return static_cast<T>(-1);  // all ones for unsigned types
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  return static_cast<T>(a / b);  // truncates toward zero, as C does
}

template <class T>
T int_rem(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1) return 0;
  return static_cast<T>(a % b);  // sign of the dividend, as C does
}

// x^y by repeated squaring, wrapping; y >= 0.
template <class T>
T int_pow(T x, uint64_t y) {
  T acc = 1;
  while (y) {
    if (y & 1) acc = wrap_mul(acc, x);
    y >>= 1;
    if (y) x = wrap_mul(x, x);
  }
  return acc;
}

}  // namespace cjax::runtime
