// Arrays and functions several compiler tests use: argument specs for tracing (f32({2, 3}) is
// ShapeDtype{f32, {2, 3}}), f64 arrays from values, uniformly random f64 arrays, and sin(sin(x)).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cjax/api.h"

namespace cjax::testing {

inline ShapeDtype f32(Shape s) {
  return ShapeDtype{DType::f32, std::move(s)};
}
inline ShapeDtype i32(Shape s) {
  return ShapeDtype{DType::i32, std::move(s)};
}

// An f64 array of `shape` holding `v`.
inline Array f64(std::vector<double> v, Shape s) {
  return array(v, s, DType::f64);
}

// An f64 array of `shape` with elements drawn uniformly from [lo, hi).
inline Array random_f64(std::mt19937& rng, const Shape& shape, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return array(v, shape, DType::f64);
}

// sin(sin(x)): value 0.78907233 and derivative -0.2556391 at x = 2.
inline Array sin_sin(const Array& x) {
  return np::sin(np::sin(x));
}

}  // namespace cjax::testing
