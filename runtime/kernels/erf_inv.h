// The inverse error function, computed as XLA computes it for float32: M. Giles, "Approximating
// the erfinv function" (GPU Computing Gems, 2011), single-precision version: a polynomial in
// w = -log((1 - x)(1 + x)), one for w < 5 and one in sqrt(w) - 3 beyond. float64 refines that
// estimate with Newton steps on erf. The CPU back end emits the same polynomial
// (compiler/cpu/lower_elementwise.cc), so the two agree to rounding.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <numbers>

namespace cjax::runtime {

// Highest degree first (Horner order).
inline constexpr std::array<float, 9> kErfInvCentral = {
    2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
    -0.00125372503f, -0.00417768164f, 0.246640727f,    1.50140941f};
inline constexpr std::array<float, 9> kErfInvTail = {
    -0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
    -0.0076224613f,   0.00943887047f,  1.00167406f,    2.83297682f};
inline constexpr float kErfInvSplit = 5.0f;  // w below: central polynomial in w - 2.5
inline constexpr float kErfInvCentralShift = 2.5f;
inline constexpr float kErfInvTailShift = 3.0f;  // tail polynomial in sqrt(w) - 3

inline float erf_inv_f32(float x) {
  if (std::fabs(x) == 1.0f) return x * std::numeric_limits<float>::infinity();
  float w = -std::log((1.0f - x) * (1.0f + x));  // NaN for |x| > 1
  const bool central = w < kErfInvSplit;
  const auto& c = central ? kErfInvCentral : kErfInvTail;
  w = central ? w - kErfInvCentralShift : std::sqrt(w) - kErfInvTailShift;
  float p = c[0];
  for (size_t i = 1; i < c.size(); ++i) p = c[i] + p * w;
  return p * x;
}

inline double erf_inv_f64(double x) {
  if (std::fabs(x) == 1.0) return x * std::numeric_limits<double>::infinity();
  double r = erf_inv_f32(static_cast<float>(x));
  if (!std::isfinite(r)) return r;
  // Newton on erf(r) = x: the float estimate has ~1e-7 relative error, two steps reach ~1e-16.
  for (int i = 0; i < 2; ++i) {
    double slope = 2.0 / std::sqrt(std::numbers::pi) * std::exp(-r * r);
    if (slope == 0.0) break;
    r -= (std::erf(r) - x) / slope;
  }
  return r;
}

}  // namespace cjax::runtime
