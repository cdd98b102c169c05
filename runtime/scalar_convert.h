// Element conversions with XLA's semantics and no undefined behaviour: float to integer
// truncates, saturates at the integer's range and maps NaN to 0; to bool is `x != 0`; integer to
// integer wraps modulo 2^bits; the 16-bit floats go through float.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/half.h"

namespace cjax::runtime {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <class To, class From>
To convert_scalar(From x) {
  if constexpr (std::is_same_v<From, Half>) {
    return convert_scalar<To>(f16_to_float(x.bits));
  } else if constexpr (std::is_same_v<From, BFloat16>) {
    return convert_scalar<To>(bf16_to_float(x.bits));
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{float_to_f16(convert_scalar<float>(x))};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16{float_to_bf16(convert_scalar<float>(x))};
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From{0};
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return To{0};
    // The bounds as From: max() of a 64-bit type is not representable, so compare with 2^bits.
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi_excl = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * 2;
    if (x <= lo) return std::numeric_limits<To>::min();
    if (x >= hi_excl) return std::numeric_limits<To>::max();
    return static_cast<To>(std::trunc(x));
  } else {
    return static_cast<To>(x);
  }
}

// Any element as double (integers beyond 2^53 round).
template <class T>
double to_double(T x) {
  return convert_scalar<double>(x);
}

}  // namespace cjax::runtime
