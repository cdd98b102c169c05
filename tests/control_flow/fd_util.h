// Finite-difference helpers of the control-flow tests (f64 arrays, central differences).
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <vector>

#include "cjax/api.h"

namespace cftest {

inline cjax::Array random_f64(std::mt19937& rng, const cjax::Shape& shape, double lo = -1.0,
                              double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return cjax::array(v, shape, cjax::DType::f64);
}

// d f / d x by central differences, element by element (f returns a scalar).
inline std::vector<double> numeric_grad(const std::function<cjax::Array(const cjax::Array&)>& f,
                                        const cjax::Array& x, double h = 1e-6) {
  std::vector<double> base = x.to_vector<double>(), out;
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> plus = base, minus = base;
    plus[i] += h;
    minus[i] -= h;
    double fp = f(cjax::array(plus, x.shape(), x.dtype())).item();
    double fm = f(cjax::array(minus, x.shape(), x.dtype())).item();
    out.push_back((fp - fm) / (2 * h));
  }
  return out;
}

inline void check_close(const cjax::Array& got, const std::vector<double>& want) {
  std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(want[i]).epsilon(1e-6).margin(1e-7));
}

}  // namespace cftest
