// 16-bit floats (IEEE half and bfloat16) as raw bits, with conversions to and from float. The
// interpreter stores them but computes only in f32/f64; these serve conversion, full() and
// element().
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace cjax::runtime {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(uint32_t{b} << 16);
}

// Round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t float_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7fff + lsb;
  return static_cast<uint16_t>(u >> 16);
}

inline float f16_to_float(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));  // inf / NaN
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

// Round to nearest even, overflow to inf, gradual underflow to subnormals.
inline uint16_t float_to_f16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past the max, 65504
  if (a < 6.103515625e-05f) {  // below the smallest normal, 2^-14: a multiple of 2^-24
    float scaled = std::nearbyint(std::ldexp(a, 24));  // default rounding mode: to nearest even
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(scaled));
  }
  uint32_t au = std::bit_cast<uint32_t>(a);
  uint32_t lsb = (au >> 13) & 1;
  au += 0xfff + lsb;  // round the 13 dropped bits to nearest even
  uint32_t exp = (au >> 23) - 112;
  return static_cast<uint16_t>(sign | (exp << 10) | ((au >> 13) & 0x3ffu));
}

}  // namespace cjax::runtime
