// Comparing compiled results with the interpreter's: relative 1e-5 in f32, 1e-12 in f64 (each
// element against the larger of itself and the array's RMS), exact for integers and bools.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/buffer.h"

namespace cjax::test {

inline void require_close(const runtime::Buffer& got, const runtime::Buffer& want) {
  REQUIRE(got.aval().shape == want.aval().shape);
  REQUIRE(got.aval().dtype == want.aval().dtype);
  const DType t = want.aval().dtype;
  const double rtol = t == DType::f64 ? 1e-12 : t == DType::f32 ? 1e-5 : 0.0;
  const auto g = got.to_doubles(), w = want.to_doubles();
  // The array's root-mean-square: a long f32 dot sums thousands of products in another order
  // than a reference would, so an element that cancels to near zero is compared at that scale.
  double sum_sq = 0;
  for (double x : w) sum_sq += std::isfinite(x) ? x * x : 0.0;
  const double scale = w.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(w.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok = std::isnan(w[i]) ? std::isnan(g[i])
                    : rtol == 0 || std::isinf(w[i])
                        ? g[i] == w[i]
                        : std::abs(g[i] - w[i]) <= rtol * std::max(std::abs(w[i]), scale);
    if (!ok) {
      INFO("element " << i << " of " << want.aval().str_short() << ": got " << g[i] << ", want "
                      << w[i]);
      REQUIRE(ok);
    }
  }
}

}  // namespace cjax::test
