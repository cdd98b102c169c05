// What the back end's tests share: seeded random inputs, and comparing compiled results with the
// interpreter's: relative 1e-5 in f32, 1e-12 in f64 (each element against the larger of itself
// and the array's RMS), exact for integers and bools.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"

namespace cjax::test {

// Floats uniform in [lo, hi]; bools either; unsigned integers 0..9, signed -9..9.
inline runtime::Buffer random_buffer(const ShapedArray& a, std::mt19937& rng, double lo,
                                     double hi) {
  runtime::Buffer b = runtime::Buffer::allocate(a);
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = is_floating(a.dtype)      ? std::uniform_real_distribution<double>(lo, hi)(rng)
               : a.dtype == DType::bool_ ? static_cast<double>(rng() % 2)
               : is_unsigned_integer(a.dtype)
                   ? static_cast<double>(rng() % 10)
                   : static_cast<double>(static_cast<int>(rng() % 19) - 9);
    // One element of the array's dtype, converted as Buffer::full converts.
    runtime::Buffer one = runtime::Buffer::full(ShapedArray{a.dtype, {}}, x);
    std::memcpy(static_cast<char*>(b.data()) + static_cast<size_t>(i) * itemsize(a.dtype),
                one.data(), itemsize(a.dtype));
  }
  return b;
}

// Random arguments for every input of `j` (see random_buffer), reproducible from `seed`.
inline std::vector<runtime::Buffer> random_inputs(const Jaxpr& j, double lo, double hi,
                                                  unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<runtime::Buffer> out;
  for (const ShapedArray& a : j.in_avals()) out.push_back(random_buffer(a, rng, lo, hi));
  return out;
}

inline void require_close(const runtime::Buffer& got, const runtime::Buffer& want) {
  REQUIRE(got.aval().shape == want.aval().shape);
  REQUIRE(got.aval().dtype == want.aval().dtype);
  const DType t = want.aval().dtype;
  if (t == DType::key_fry) {  // keys: their words, exactly
    REQUIRE(std::memcmp(got.data(), want.data(), want.nbytes()) == 0);
    return;
  }
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
