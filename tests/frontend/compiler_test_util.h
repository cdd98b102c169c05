// Arrays and functions several compiler tests use: argument specs for tracing (f32({2, 3}) is
// ShapeDtype{f32, {2, 3}}), f64 arrays from values, uniformly random f64 arrays, and sin(sin(x)).
#pragma once

#include <cstdint>
#include <functional>
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

// An f32 array of `shape` with elements drawn uniformly from [-1, 1).
inline Array random_f32(std::mt19937& rng, const Shape& shape) {
  return random_f64(rng, shape).astype(DType::f32);
}

// d f / d x by central differences, element by element (x in f64 for accuracy).
inline std::vector<double> numeric_grad(const std::function<Array(const Array&)>& f, const Array& x,
                                        double h = 1e-6) {
  std::vector<double> base = x.to_vector<double>(), out;
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> plus = base, minus = base;
    plus[i] += h;
    minus[i] -= h;
    const double fp = f(array(plus, x.shape(), x.dtype())).item();
    const double fm = f(array(minus, x.shape(), x.dtype())).item();
    out.push_back((fp - fm) / (2 * h));
  }
  return out;
}

// sin(sin(x)): value 0.78907233 and derivative -0.2556391 at x = 2.
inline Array sin_sin(const Array& x) {
  return np::sin(np::sin(x));
}

}  // namespace cjax::testing
