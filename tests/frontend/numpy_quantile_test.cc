// jnp.quantile / percentile / median and their nan- forms, jnp.any / all and jnp.linspace's
// axis: values against NumPy's (worked out with numpy 1.26/2.x, quoted), the structure of JAX's
// _quantile jaxpr, compiled against interpreted, and gradients against finite differences.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

namespace cjax {
namespace numpy_quantile_test {

namespace jnp = cjax::numpy;
using V = std::vector<double>;

V values(const Array& a) {
  return a.astype(DType::f64).to_vector<double>();
}

void check_close(const V& got, const V& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
}

void check_close_or_nan(const V& got, const V& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i]))
      CHECK(std::isnan(got[i]));
    else
      CHECK(got[i] == Approx(want[i]).margin(tol));
  }
}

// jnp.quantile or jnp.nanquantile, as one signature.
using QuantileFn = std::function<Array(const Array& a, const Array& q, int64_t axis,
                                       const char* method, bool keepdims)>;
const QuantileFn kQuantile = [](const Array& a, const Array& q, int64_t axis, const char* method,
                                bool keepdims) {
  return jnp::quantile(a, q, axis, method, keepdims);
};
const QuantileFn kNanQuantile = [](const Array& a, const Array& q, int64_t axis, const char* method,
                                   bool keepdims) {
  return jnp::nanquantile(a, q, axis, method, keepdims);
};

// Every method, with and without keepdims: the jaxpr evaluates as the eager call does, and
// compiles (NaNs where the eager call has them).
void check_compiles_as_eager(const QuantileFn& fn, const Array& x, int64_t axis) {
  for (const char* method : {"linear", "lower", "higher", "nearest", "midpoint"}) {
    for (bool keepdims : {false, true}) {
      INFO(method << " keepdims " << keepdims);
      auto q = [&](const Array& a) {
        const Array qs = array(std::vector<float>{0.0f, 0.2f, 0.65f, 1.0f}, Shape{4});
        return fn(a, qs, axis, method, keepdims);
      };
      check_close_or_nan(values(jit(q)(x)), values(q(x)), 1e-6);
    }
  }
}

// The gradient of sum(sin(fn(a, [0.15, 0.5, 0.8], axis, method))) against central differences.
// q in f64 too: "linear" interpolates in q's dtype (JAX's), f32 would blur the differences.
void check_gradients(const QuantileFn& fn, int64_t axis, std::vector<const char*> methods,
                     unsigned seed) {
  std::mt19937 rng(seed);
  const Array x = testing::random_f64(rng, {3, 6});
  for (const char* method : methods) {
    INFO(method);
    auto loss = [&](const Array& a) {
      const Array qs = array(std::vector<double>{0.15, 0.5, 0.8}, Shape{3}).astype(DType::f64);
      return jnp::sum(jnp::sin(fn(a, qs, axis, method, false)));
    };
    check_close(grad(loss)(x).to_vector<double>(), testing::numeric_grad(loss, x), 1e-6);
  }
}

const Array kX = array(std::vector<float>{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, Shape{2, 5});

TEST_CASE("quantile interpolates between order statistics by method, as NumPy's") {
  const Array qs = array(std::vector<float>{0.1f, 0.3f, 0.5f, 0.7f}, Shape{4});
  // np.quantile(x, [0.1, 0.3, 0.5, 0.7], axis=1, method=m)
  check_close(values(jnp::quantile(kX, qs, 1, "lower")), {1, 2, 1, 3, 3, 5, 3, 5});
  check_close(values(jnp::quantile(kX, qs, 1, "higher")), {1, 3, 3, 5, 3, 5, 4, 6});
  check_close(values(jnp::quantile(kX, qs, 1, "nearest")), {1, 2, 1, 3, 3, 5, 4, 6});
  check_close(values(jnp::quantile(kX, qs, 1, "midpoint")), {1, 2.5, 2, 4, 3, 5, 3.5, 5.5});
  check_close(values(jnp::quantile(kX, qs, 1)), {1, 2.4, 1.4, 3.4, 3, 5, 3.8, 5.8});
  CHECK(jnp::quantile(kX, qs, 1).shape() == Shape{4, 2});
  check_close(values(jnp::quantile(kX, 0.3f, 1)), {1.4, 3.4});
  // median: all elements, along an axis with keepdims, of integers (a float result).
  CHECK(jnp::median(kX).item() == Approx(3.5));
  const Array m0 = jnp::median(kX, 0, true);
  CHECK(m0.shape() == Shape{1, 5});
  check_close(values(m0), {6, 1.5, 5, 3, 4});
  const Array mi = jnp::median(array(std::vector<int32_t>{4, 1, 3, 2}, Shape{4}));
  CHECK(mi.dtype() == DType::f32);
  CHECK(mi.item() == Approx(2.5));
  // Several axes: the reduced axes merged (np.percentile(x, 40, axis=(0, 1), keepdims=True)).
  const Array p = jnp::percentile(kX, 40, {0, 1}, "linear", true);
  CHECK(p.shape() == Shape{1, 1});
  CHECK(p.item() == Approx(3.0));
  const Array x3 = jnp::reshape(jnp::arange(24).astype(DType::f32), {2, 3, 4});
  // np.median(np.arange(24).reshape(2, 3, 4), axis=(0, 2)) = [7.5, 11.5, 15.5]
  check_close(values(jnp::median(x3, {0, 2})), {7.5, 11.5, 15.5});
  CHECK(jnp::median(x3, {2, 0}, true).shape() == Shape{1, 3, 1});
  // A NaN along the axis makes that quantile NaN; the other row is unaffected.
  const Array with_nan = array(
      std::vector<float>{1, std::numeric_limits<float>::quiet_NaN(), 3, 4, 5, 6}, Shape{2, 3});
  const V med = values(jnp::median(with_nan, 1));
  CHECK(std::isnan(med[0]));
  CHECK(med[1] == 5);
}

TEST_CASE("quantile traces as JAX's _quantile inside jit[name=quantile]") {
  auto f = [](const Array& a) { return jnp::median(a, 1); };
  const std::string text = to_string(make_jaxpr(f)(ShapeDtype{DType::f32, {2, 5}}));
  INFO(text);
  CHECK(text.find("name=median") != std::string::npos);
  CHECK(text.find("name=quantile") != std::string::npos);
  CHECK(text.find("reduce_or[axes=(1,)]") != std::string::npos);  // the NaN check
  CHECK(text.find("sort[dimension=1 is_stable=True num_keys=1]") != std::string::npos);
  CHECK(text.find("clamp") != std::string::npos);
  CHECK(text.find("offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,)") !=
        std::string::npos);
  std::mt19937 rng(3);
  check_compiles_as_eager(kQuantile, testing::random_f64(rng, {4, 7}).astype(DType::f32), 0);
}

TEST_CASE("quantile differentiates as the finite differences say") {
  check_gradients(kQuantile, 1, {"linear", "midpoint", "nearest"}, 5);
}

TEST_CASE("quantile refuses what JAX refuses, naming the op") {
  CHECK_THROWS_WITH(jnp::quantile(kX, 0.5f, 1, "cubic"),
                    Catch::Contains("method can only be 'linear'"));
  CHECK_THROWS_WITH(jnp::quantile(kX, jnp::ones({2, 2}), 1),
                    Catch::Contains("q must be have rank <= 1"));
  CHECK_THROWS_WITH(jnp::quantile(kX, 1, 1), Catch::Contains("q must be floating point"));
  CHECK_THROWS_WITH(jnp::median(kX, {1, -1}), Catch::Contains("repeated axis"));
  CHECK_THROWS_WITH(jnp::median(jnp::zeros({2, 0}), 1),
                    Catch::Contains("quantile: no elements along the reduced axes of f32[2,0]"));
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Rows with one NaN, all NaNs, and one NaN again.
const Array kY =
    array(std::vector<float>{3, kNaN, 4, 1, 5, kNaN, kNaN, kNaN, kNaN, kNaN, 2, 6, kNaN, 5, 3},
          Shape{3, 5});

TEST_CASE("nanquantile ignores NaNs row by row, as NumPy's nanquantile") {
  const Array qs = array(std::vector<float>{0.1f, 0.3f, 0.5f, 0.7f}, Shape{4});
  const double n = std::nan("");
  // np.nanquantile(y, [0.1, 0.3, 0.5, 0.7], axis=1, method=m); an all-NaN row gives NaN.
  check_close_or_nan(values(jnp::nanquantile(kY, qs, 1)),
                     {1.6, n, 2.3, 2.8, n, 2.9, 3.5, n, 4.0, 4.1, n, 5.1});
  check_close_or_nan(values(jnp::nanquantile(kY, qs, 1, "lower")),
                     {1, n, 2, 1, n, 2, 3, n, 3, 4, n, 5});
  check_close_or_nan(values(jnp::nanquantile(kY, qs, 1, "higher")),
                     {3, n, 3, 3, n, 3, 4, n, 5, 5, n, 6});
  check_close_or_nan(values(jnp::nanquantile(kY, qs, 1, "midpoint")),
                     {2, n, 2.5, 2, n, 2.5, 3.5, n, 4, 4.5, n, 5.5});
  // JAX's nearest takes the lower statistic on a tie (q = 0.5 of 4 values: position 1.5), where
  // NumPy rounds half to even; elsewhere they agree.
  check_close_or_nan(values(jnp::nanquantile(kY, qs, 1, "nearest")),
                     {1, n, 2, 3, n, 3, 3, n, 3, 4, n, 5});
  CHECK(jnp::nanquantile(kY, qs, 1).shape() == Shape{4, 3});
  check_close_or_nan(values(jnp::nanquantile(kY, 0.3f, 1)), {2.8, n, 2.9});
  // np.nanmedian over all elements, along an axis with keepdims; np.nanpercentile over two axes.
  CHECK(jnp::nanmedian(kY).item() == Approx(3.5));
  const Array m0 = jnp::nanmedian(kY, 0, true);
  CHECK(m0.shape() == Shape{1, 5});
  check_close_or_nan(values(m0), {2.5, 6, 4, 3, 4});
  const Array p = jnp::nanpercentile(kY, 40, {0, 1}, "linear", true);
  CHECK(p.shape() == Shape{1, 1});
  CHECK(p.item() == Approx(3.0));
  // Without NaNs it is quantile.
  check_close(values(jnp::nanquantile(kX, qs, 1)), values(jnp::quantile(kX, qs, 1)));
  CHECK(jnp::nanmedian(kX, 1, true).shape() == Shape{2, 1});
}

TEST_CASE("nanquantile traces as JAX's _quantile with squash_nans, and compiles") {
  auto f = [](const Array& a) { return jnp::nanmedian(a, 1); };
  const std::string text = to_string(make_jaxpr(f)(ShapeDtype{DType::f32, {3, 5}}));
  INFO(text);
  CHECK(text.find("name=nanmedian") != std::string::npos);
  CHECK(text.find("name=nanquantile") != std::string::npos);
  // NaNs made positive (they sort last), the non-NaN count, and NumPy indexing by an iota over
  // the kept axis beside the position along the reduced one: a gather of both coordinates.
  CHECK(text.find("] c nan:f32[] a") != std::string::npos);
  CHECK(text.find("j:bool[3,5] = not i") != std::string::npos);
  CHECK(text.find("m:f32[3] = reduce_sum[axes=(1,) out_sharding=None] l") != std::string::npos);
  CHECK(text.find("iota[dimension=0 dtype=int32 shape=(3,) sharding=None]") != std::string::npos);
  CHECK(text.find("collapsed_slice_dims=(0, 1), start_index_map=(0, 1)") != std::string::npos);
  CHECK(text.find("by:f32[3] = mul bx 0.5:f32[]") != std::string::npos);
  std::mt19937 rng(4);
  const Array x = testing::random_f64(rng, {4, 7}).astype(DType::f32);
  check_compiles_as_eager(kNanQuantile, jnp::where(x > 0.6f, kNaN, x), 1);
}

TEST_CASE("nanquantile differentiates as the finite differences say") {
  check_gradients(kNanQuantile, 0, {"linear", "midpoint", "lower"}, 6);
  CHECK_THROWS_WITH(jnp::nanquantile(kX, 0.5f, 1, "cubic"),
                    Catch::Contains("nanquantile: method can only be 'linear'"));
  CHECK_THROWS_WITH(jnp::nanpercentile(kX, 1, 1, "cubic"),
                    Catch::Contains("nanpercentile: method can only be"));
}

TEST_CASE("any and all reduce over the array cast to bool") {
  const Array m = array(std::vector<float>{0, 0, 2, 0, 1, 3}, Shape{2, 3});
  CHECK(values(jnp::any(m, 1)) == V{1, 1});
  CHECK(values(jnp::all(m, 0)) == V{0, 0, 1});
  CHECK(jnp::all(m).item() == 0);
  CHECK(jnp::any(m, 0, true).shape() == Shape{1, 3});
  const std::string text = to_string(
      make_jaxpr([](const Array& a) { return jnp::any(a, 1); })(ShapeDtype{DType::f32, {2, 3}}));
  CHECK(text.find("convert_element_type[new_dtype=bool weak_type=False]") != std::string::npos);
  CHECK(text.find("reduce_or[axes=(1,)]") != std::string::npos);
}

TEST_CASE("linspace places its samples along `axis`, and integer dtypes round down") {
  const Array lo = array(std::vector<float>{0, 1}, Shape{2});
  const Array hi = array(std::vector<float>{4, 9}, Shape{2});
  const Array along1 = jnp::linspace(lo, hi, 5, true, std::nullopt, 1);
  CHECK(along1.shape() == Shape{2, 5});
  check_close(values(along1), {0, 1, 2, 3, 4, 1, 3, 5, 7, 9});
  CHECK(jnp::linspace(lo, hi, 5, true, std::nullopt, -1).shape() == Shape{2, 5});
  CHECK(jnp::linspace(lo, hi, 3, false).shape() == Shape{3, 2});
  // np.linspace(-3, 2, 4, dtype=np.int32): -3, -1.33, 0.33, 2 rounded down.
  CHECK(values(jnp::linspace(-3, 2, 4, true, DType::i32)) == V{-3, -2, 0, 2});
  CHECK_THROWS_WITH(jnp::linspace(lo, hi, 5, true, std::nullopt, 2),
                    Catch::Contains("axis 2 is out of bounds"));
}

}  // namespace numpy_quantile_test
}  // namespace cjax
