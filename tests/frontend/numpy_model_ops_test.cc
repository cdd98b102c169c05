// jax.numpy's model-building helpers (tril/triu, split, cumsum, var/std, linspace, transpose by a
// brace list): the jaxprs jax 0.11.2 printed (tests/golden/jax_0_11_2/model_ops.md) and values.
#include <catch2/catch.hpp>

#include <cmath>

#include <random>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace numpy_model_ops_test {

namespace jnp = cjax::numpy;

std::string jax(const std::string& title) {
  return golden::jax_case("model_ops.md", title);
}
const ShapeDtype m23{DType::f32, {2, 3}}, m34{DType::f32, {3, 4}};

std::vector<float> values(const Array& a) {
  const float* p = a.buffer().as<float>();
  return {p, p + a.size()};
}

TEST_CASE("tril, triu, split, cumsum, var/std, linspace print as JAX's") {
  auto tri = [](const Array& a) { return std::tuple{jnp::tril(a), jnp::triu(a, 1)}; };
  CHECK(to_string(make_jaxpr(tri)(m34)) == jax("tril triu"));
  auto halves = [](const Array& a) { return jnp::split(a, 2, 1); };
  CHECK(to_string(make_jaxpr(halves)(m34)) == jax("split"));
  auto thirds = [](const Array& a) { return jnp::array_split(a, 3, 1); };
  CHECK(to_string(make_jaxpr(thirds)(m34)) == jax("array_split"));
  auto cum = [](const Array& a) { return std::tuple{jnp::cumsum(a, 1), jnp::cumprod(a, 0)}; };
  CHECK(to_string(make_jaxpr(cum)(m23)) == jax("cumsum cumprod"));
  auto cum_loss = [](const Array& a) { return jnp::sum(jnp::power(jnp::cumsum(a, 1), 2)); };
  CHECK(to_string(make_jaxpr(grad(cum_loss))(m23)) == jax("cumsum grad"));
  auto stats = [](const Array& a) { return std::tuple{jnp::var(a, 1), jnp::std(a)}; };
  CHECK(to_string(make_jaxpr(stats)(m23)) == jax("var std"));
  CHECK(to_string(make_jaxpr([] { return jnp::linspace(0.0, 1.0, 5); })()) == jax("linspace"));
  // One statement per step: C++ leaves the order of an expression's operands open.
  auto layer_norm = [](const Array& a, const Array& g, const Array& b) {
    const Array centered = a - jnp::mean(a, -1, true);
    const Array scale = lax::rsqrt(jnp::var(a, -1, 0, true) + 1e-5);
    const Array normed = centered * scale;
    return normed * g + b;
  };
  CHECK(to_string(make_jaxpr(layer_norm)(m34, ShapeDtype{DType::f32, {4}},
                                         ShapeDtype{DType::f32, {4}})) ==
        jax("layer_norm by hand"));
}

TEST_CASE("where with a broadcast scalar, clip, argmax and argmin print as JAX's") {
  auto masked = [](const Array& p, const Array& a) { return jnp::where(p, a, 0.0); };
  CHECK(to_string(make_jaxpr(masked)(ShapeDtype{DType::bool_, {2, 3}}, m23)) ==
        jax("where one broadcast"));
  auto clipped = [](const Array& a) { return jnp::clip(a, -0.5, 0.5); };
  CHECK(to_string(make_jaxpr(clipped)(m23)) == jax("clip"));
  auto args = [](const Array& a) { return std::tuple{jnp::argmax(a, 1), jnp::argmin(a)}; };
  CHECK(to_string(make_jaxpr(args)(m23)) == jax("argmax argmin"));
}

TEST_CASE("their values") {
  const Array a = jnp::reshape(jnp::arange(1.0, 7.0), {2, 3});  // [[1, 2, 3], [4, 5, 6]]
  CHECK(values(jnp::tril(a)) == std::vector<float>{1, 0, 0, 4, 5, 0});
  CHECK(values(jnp::triu(a, 1)) == std::vector<float>{0, 2, 3, 0, 0, 6});
  CHECK(values(jnp::tril(a, -1)) == std::vector<float>{0, 0, 0, 4, 0, 0});
  CHECK(values(jnp::cumsum(a, 1)) == std::vector<float>{1, 3, 6, 4, 9, 15});
  CHECK(values(jnp::cumsum(a)) == std::vector<float>{1, 3, 6, 10, 15, 21});
  CHECK(values(jnp::cumprod(a, 0)) == std::vector<float>{1, 2, 3, 4, 10, 18});
  CHECK(values(jnp::var(a, 1)) == std::vector<float>{2.0f / 3, 2.0f / 3});
  CHECK(jnp::std(a).item() == Approx(std::sqrt(17.5 / 6)).epsilon(1e-6));
  CHECK(values(jnp::var(a, 1, 1)) == std::vector<float>{1, 1});
  CHECK(std::isnan(jnp::var(a, 1, 3).buffer().as<float>()[0]));  // N - ddof = 0
  CHECK(values(jnp::linspace(0.0, 1.0, 5)) == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1});
  CHECK(values(jnp::linspace(0.0, 1.0, 4, false)) == std::vector<float>{0, 0.25f, 0.5f, 0.75f});
  CHECK(jnp::linspace(2.0, 3.0, 0).shape() == Shape{0});
  const std::vector<Array> parts = jnp::split(a, std::vector<int64_t>{1}, 1);
  REQUIRE(parts.size() == 2);
  CHECK(values(parts[0]) == std::vector<float>{1, 4});
  CHECK(values(parts[1]) == std::vector<float>{2, 3, 5, 6});
  const Array x = jnp::reshape(jnp::arange(24.0), {1, 2, 3, 4});
  CHECK(jnp::transpose(x, {0, 2, 1, 3}).shape() == Shape{1, 3, 2, 4});
  CHECK_THROWS_WITH(jnp::split(a, 2, 1), Catch::Contains("does not result in an equal division"));
  CHECK_THROWS_WITH(jnp::tril(jnp::ones({3})), Catch::Contains("must be at least 2D"));
}

TEST_CASE("gradients of var and cumsum against finite differences") {
  const Array a = jnp::reshape(jnp::arange(6.0), {2, 3}).astype(DType::f64) * 0.3 - 0.4;
  auto loss = [](const Array& x) {
    return jnp::sum(jnp::var(x, 1, 0, true) + jnp::cumsum(x, 0) * x);
  };
  const Array g = grad(loss)(a);
  const double h = 1e-6;
  for (int64_t i = 0; i < 6; ++i) {
    std::vector<double> bumped(6, 0.0);
    bumped[size_t(i)] = h;
    const Array d = cjax::array(bumped, Shape{2, 3}, DType::f64);
    const double fd = (loss(a + d).item() - loss(a - d).item()) / (2 * h);
    CHECK(g.buffer().as<double>()[i] == Approx(fd).epsilon(1e-6).margin(1e-8));
  }
}

TEST_CASE("nn::one_hot prints as JAX's and marks each class") {
  auto f = [](const Array& t) { return nn::one_hot(t, 5); };
  CHECK(to_string(make_jaxpr(f)(ShapeDtype{DType::i32, {3}})) == jax("one_hot"));
  const Array ids = cjax::array(std::vector<int32_t>{0, 3, 7}, Shape{3}, DType::i32);
  CHECK(values(nn::one_hot(ids, 5)) ==
        std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});  // 7: out of range
  CHECK(nn::one_hot(ids, 4, DType::f32, 0).shape() == Shape{4, 3});
}

TEST_CASE("nn::initializers draw JAX's values for the same key") {
  namespace init = nn::initializers;
  for (const auto& [title, f] :
       {std::pair{"initializers glorot_normal values", init::glorot_normal()},
        std::pair{"initializers lecun_uniform values", init::lecun_uniform()},
        std::pair{"initializers he_normal values", init::he_normal()}}) {
    INFO(title);
    const std::vector<double> want = golden::numbers(jax(title));
    const std::vector<float> got = values(f(random::key(0), {3, 4}, DType::f32));
    REQUIRE(got.size() == want.size());
    // truncated_normal goes through erf_inv: within a few ulps of XLA's.
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(2e-6));
  }
  // Fans of a convolution kernel (3x3 receptive field, 16 in, 32 out): lecun_normal's variance
  // is 1 / (9 * 16).
  const Array w = init::lecun_normal()(random::key(1), {3, 3, 16, 32}, DType::f32);
  const double v = jnp::var(w).item();
  CHECK(v == Approx(1.0 / 144).epsilon(0.1));
  CHECK_THROWS_WITH(init::glorot_normal()(random::key(0), {5}, DType::f32),
                    Catch::Contains("needs an input and an output axis"));
}

}  // namespace numpy_model_ops_test
}  // namespace cjax

namespace cjax {
namespace numpy_pad_test {

namespace jnp = cjax::numpy;

TEST_CASE("jnp.pad prints as JAX's jit[name=_pad], pads with the constant and differentiates") {
  const ShapeDtype m23{DType::f32, {2, 3}};
  auto padded = [](const Array& a) { return jnp::pad(a, {{1, 0}, {2, 1}}); };
  CHECK(to_string(make_jaxpr(padded)(m23)) == golden::jax_case("model_ops.md", "pad"));
  // The transpose's pad and slice carry JAX's numpy ints, and the padding value's instantiated
  // zero tangent is a residual the forward jit returns (0.0) and the backward jit never reads.
  CHECK(to_string(make_jaxpr(grad([](const Array& a) {
          return jnp::sum(jnp::power(jnp::pad(a, {{1, 0}, {2, 1}}), 2));
        }))(m23)) == golden::jax_case("model_ops.md", "pad grad"));
  const Array x = jnp::reshape(jnp::arange(6.0f), {2, 3});
  const Array p = jnp::pad(x, {{1, 0}, {0, 2}}, 9.0f);
  CHECK(p.shape() == Shape{3, 5});
  CHECK(p.to_vector<float>() == std::vector<float>{9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 3, 4, 5, 9, 9});
  CHECK(jnp::pad(x, 1).shape() == Shape{4, 5});
  auto loss = [](const Array& a) { return jnp::sum(jnp::power(jnp::pad(a, {{1, 0}, {2, 1}}), 2)); };
  CHECK(grad(loss)(x).to_vector<float>() == (x * 2.0f).to_vector<float>());
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 0}, {0, 0}, {0, 0}}),
                    Catch::Contains("pad: 3 (before, after) pairs"));
  CHECK_THROWS_WITH(jnp::pad(x, {{-1, 0}, {0, 0}}), Catch::Contains("negative"));
}

TEST_CASE("jnp.pad with a function fills each axis' ends through apply_along_axis") {
  const Array x = jnp::reshape(jnp::arange(6.0f), {2, 3});
  // NumPy's documented pad_with, returning the vector (JAX cannot fill it in place).
  auto pad_with = [](const Array& v, std::pair<int64_t, int64_t> w, int64_t) {
    const int64_t n = v.shape()[0];
    return v.at(slice(0, w.first)).set(10.0f).at(slice(n - w.second, n)).set(10.0f);
  };
  const Array p = jnp::pad(x, {{2, 2}}, pad_with);
  CHECK(p.shape() == Shape{6, 7});
  std::vector<float> want(42, 10.0f);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) want[static_cast<size_t>((r + 2) * 7 + c + 2)] = float(r * 3 + c);
  CHECK(p.to_vector<float>() == want);
  // The function sees each axis in turn: axis 1's pass overwrites the corners axis 0 filled.
  auto by_axis = [](const Array& v, std::pair<int64_t, int64_t> w, int64_t axis) {
    const int64_t n = v.shape()[0];
    const float fill = static_cast<float>(axis + 1);
    return v.at(slice(0, w.first)).set(fill).at(slice(n - w.second, n)).set(fill);
  };
  CHECK(jnp::pad(x, {{1, 0}, {0, 1}}, by_axis).to_vector<float>() ==
        std::vector<float>{1, 1, 1, 2, 0, 1, 2, 2, 3, 4, 5, 2});
  // A function copying the edges pads as "edge" does, and so differentiates as it does.
  auto edge = [](const Array& v, std::pair<int64_t, int64_t> w, int64_t) {
    const int64_t n = v.shape()[0];
    const Array first = v[w.first], last = v[n - w.second - 1];
    return v.at(slice(0, w.first)).set(first).at(slice(n - w.second, n)).set(last);
  };
  const std::vector<std::pair<int64_t, int64_t>> widths = {{1, 2}, {2, 1}};
  CHECK(jnp::pad(x, widths, edge).to_vector<float>() ==
        jnp::pad(x, widths, "edge").to_vector<float>());
  auto loss_fn = [&](const Array& a) {
    return jnp::sum(jnp::sin(jnp::pad(a, widths, edge)) * jnp::arange(30.0f).reshape({5, 6}));
  };
  auto loss_edge = [&](const Array& a) {
    return jnp::sum(jnp::sin(jnp::pad(a, widths, "edge")) * jnp::arange(30.0f).reshape({5, 6}));
  };
  const std::vector<float> g = grad(loss_fn)(x).to_vector<float>();
  const std::vector<float> g_edge = grad(loss_edge)(x).to_vector<float>();
  REQUIRE(g.size() == g_edge.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(g_edge[i]).margin(1e-4));
  // Not jitted (JAX's _pad_func): zeros by one `pad`, then a batched scatter per axis; it
  // compiles to what it interprets.
  const std::string text = to_string(make_jaxpr(
      [&](const Array& a) { return jnp::pad(a, widths, edge); })(ShapeDtype{DType::f32, {2, 3}}));
  INFO(text);
  CHECK(text.find("name=_pad") == std::string::npos);
  CHECK(text.find("padding_config=((np.int64(1), np.int64(2), 0), (np.int64(2), np.int64(1), "
                  "0))") != std::string::npos);
  CHECK(text.find("scatter") != std::string::npos);
  auto padded = [&](const Array& a) { return jnp::pad(a, widths, edge); };
  CHECK(jit(padded)(x).to_vector<float>() == padded(x).to_vector<float>());
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, [](const Array& v, auto, int64_t) { return v[0]; }),
                    Catch::Contains("pad: the padding function returned f32[] for a f32[4] "
                                    "vector along axis 0"));
}

TEST_CASE("jnp.apply_along_axis applies a 1-D function to every vector along the axis") {
  const Array x = jnp::reshape(jnp::arange(24.0f), {2, 3, 4});
  auto weigh = [](const Array& v) { return v * jnp::arange(static_cast<float>(v.shape()[0])); };
  for (int64_t axis : {0, 1, 2, -1}) {
    INFO("axis " << axis);
    const Array got = jnp::apply_along_axis(weigh, axis, x);
    CHECK(got.shape() == x.shape());
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    const std::vector<float> xs = x.to_vector<float>(), gs = got.to_vector<float>();
    for (int64_t i = 0; i < 24; ++i) {
      const int64_t coord[3] = {i / 12, (i / 4) % 3, i % 4};
      CHECK(gs[static_cast<size_t>(i)] == xs[static_cast<size_t>(i)] * float(coord[ax]));
    }
  }
  // A reducing function removes the axis (np.apply_along_axis(np.sum, 1, x)).
  const Array sums = jnp::apply_along_axis([](const Array& v) { return jnp::sum(v); }, 1, x);
  CHECK(sums.shape() == Shape{2, 4});
  CHECK(sums.to_vector<float>() == jnp::sum(x, 1).to_vector<float>());
  CHECK_THROWS_WITH(jnp::apply_along_axis(weigh, 3, x), Catch::Contains("apply_along_axis"));
}

}  // namespace numpy_pad_test
}  // namespace cjax

namespace cjax {
namespace top_k_test {

namespace jnp = cjax::numpy;

TEST_CASE("lax.top_k prints as JAX's, keeps ties in order, differentiates and vmaps") {
  auto top2 = [](const Array& a) {
    auto [values, indices] = lax::top_k(a, 2);
    return std::tuple{values, indices};
  };
  CHECK(to_string(make_jaxpr(top2)(ShapeDtype{DType::f32, {3, 4}})) ==
        golden::jax_case("model_ops.md", "top_k"));
  const Array x = array(std::vector<float>{3, 1, 3, 2, -1, 5, 5, 0}, Shape{2, 4});
  auto [values, indices] = lax::top_k(x, 3);
  CHECK(values.to_vector<float>() == std::vector<float>{3, 3, 2, 5, 5, 0});
  CHECK(indices.to_vector<int32_t>() == std::vector<int32_t>{0, 2, 3, 1, 2, 3});
  auto [cols, col_idx] = lax::top_k(x, 1, 0);  // along the first axis
  CHECK(cols.to_vector<float>() == std::vector<float>{3, 5, 5, 2});
  CHECK(col_idx.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 1, 0});
  // The gradient lands on the chosen elements.
  auto loss = [](const Array& a) { return jnp::sum(lax::top_k(a, 2).first * 2.0f); };
  CHECK(grad(loss)(array(std::vector<float>{0.5f, 4, 1, 3}, Shape{4})).to_vector<float>() ==
        std::vector<float>{0, 2, 0, 2});
  auto rows = [](const Array& a) { return lax::top_k(a, 2).first; };
  const Array batched = vmap(rows)(x);
  CHECK(batched.to_vector<float>() == std::vector<float>{3, 3, 5, 5});
  CHECK_THROWS_WITH(lax::top_k(x, 5), Catch::Contains("k=5 must be between 0 and"));
}

}  // namespace top_k_test
}  // namespace cjax

namespace cjax {
namespace pad_modes_test {

namespace jnp = cjax::numpy;

struct PadCase {
  const char* title;  // in tests/golden/jax_0_11_2/model_ops.md
  Shape shape;
  std::vector<std::pair<int64_t, int64_t>> widths;
  const char* mode;
  const char* reflect_type;
};

const PadCase kPadCases[] = {
    {"pad edge", {3, 4}, {{1, 2}, {2, 1}}, "edge", "even"},
    {"pad reflect, past the array's length", {3}, {{5, 4}}, "reflect", "even"},
    {"pad reflect odd", {2, 3}, {{0, 3}, {4, 0}}, "reflect", "odd"},
    {"pad reflect odd, one wide", {1}, {{2, 3}}, "reflect", "odd"},
    {"pad symmetric", {3}, {{5, 4}}, "symmetric", "even"},
    {"pad symmetric odd", {3, 4}, {{1, 2}, {2, 1}}, "symmetric", "odd"},
    {"pad wrap", {3, 4}, {{1, 2}, {2, 1}}, "wrap", "even"},
    {"pad wrap, no padding", {4}, {{0, 0}}, "wrap", "even"},
};

TEST_CASE("jnp.pad's edge, reflect, symmetric and wrap modes print and pad as JAX's") {
  for (const PadCase& c : kPadCases) {
    INFO(c.title);
    auto padded = [&](const Array& a) { return jnp::pad(a, c.widths, c.mode, c.reflect_type); };
    CHECK(to_string(make_jaxpr(padded)(ShapeDtype{DType::f32, c.shape})) ==
          golden::jax_case("model_ops.md", c.title));
    int64_t n = 1;
    for (int64_t d : c.shape) n *= d;
    const Array x = jnp::reshape(jnp::arange(n).astype(DType::f32) * 1.5f + 1.0f, c.shape);
    const std::vector<double> want =
        golden::numbers(golden::jax_case("model_ops.md", std::string(c.title) + " value"));
    const std::vector<float> got = padded(x).to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == float(want[i]));  // exact: copies
  }
}

TEST_CASE("jnp.pad's modes differentiate as the finite differences say") {
  std::mt19937 rng(11);
  for (const PadCase& c : kPadCases) {
    INFO(c.title);
    const Array x = testing::random_f64(rng, c.shape);
    const int64_t out_size = jnp::pad(x, c.widths, c.mode, c.reflect_type).size();
    const Array w = jnp::cos(jnp::arange(out_size).astype(DType::f64));
    auto loss = [&](const Array& a) {
      return jnp::sum(jnp::ravel(jnp::pad(a, c.widths, c.mode, c.reflect_type)) * w);
    };
    const std::vector<double> g = grad(loss)(x).to_vector<double>();
    const std::vector<double> fd = testing::numeric_grad(loss, x);
    REQUIRE(g.size() == fd.size());
    for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(fd[i]).margin(1e-6));
  }
}

// NumPy's results, worked out by hand (statistics of the array padded along the axes before).
TEST_CASE("jnp.pad's maximum, minimum and mean modes pad with each axis' statistic") {
  const Array v = array(std::vector<float>{1, 5, 2, 8}, Shape{4});
  auto values = [](const Array& a) { return a.to_vector<double>(); };
  using V = std::vector<double>;
  CHECK(values(jnp::pad(v, {{2, 3}}, "maximum")) == V{8, 8, 1, 5, 2, 8, 8, 8, 8});
  CHECK(values(jnp::pad(v, {{2, 3}}, "minimum")) == V{1, 1, 1, 5, 2, 8, 1, 1, 1});
  CHECK(values(jnp::pad(v, {{2, 3}}, "mean")) == V{4, 4, 1, 5, 2, 8, 4, 4, 4});
  // stat_length: the first 1 and the last 2 elements (a length past the axis means all of it).
  CHECK(values(jnp::pad(v, {{2, 3}}, "maximum", {.stat_length = {{1, 2}}})) ==
        V{1, 1, 1, 5, 2, 8, 8, 8, 8});
  CHECK(values(jnp::pad(v, {{1, 1}}, "mean", {.stat_length = {{1, 2}}})) == V{1, 1, 5, 2, 8, 5});
  CHECK(values(jnp::pad(v, {{1, 1}}, "mean", {.stat_length = {{9, 9}}})) == V{4, 1, 5, 2, 8, 4});
  // Two axes: the second axis' means are of rows already padded along the first.
  const Array m = array(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  CHECK(values(jnp::pad(m, {{1, 1}, {1, 0}}, "mean")) ==
        V{3.5, 2.5, 3.5, 4.5, 2, 1, 2, 3, 5, 4, 5, 6, 3.5, 2.5, 3.5, 4.5});
  // Integers: the mean rounded half to even (1.5 -> 2, 2.5 -> 2), in the array's dtype.
  const Array i = jnp::pad(array(std::vector<int32_t>{1, 2}, Shape{2}), {{1, 1}}, "mean");
  CHECK(i.dtype() == DType::i32);
  CHECK(values(i) == V{2, 1, 2, 2});
  CHECK(values(jnp::pad(array(std::vector<int32_t>{1, 4}, Shape{2}), {{1, 1}}, "mean")) ==
        V{2, 1, 4, 2});
  CHECK(values(jnp::pad(array(std::vector<int32_t>{7, -3}, Shape{2}), {{0, 2}}, "minimum")) ==
        V{7, -3, -3, -3});
  // Compiled as interpreted.
  auto padded = [](const Array& a) {
    return jnp::pad(a, {{1, 2}, {0, 3}}, "mean", {.stat_length = {{1, 2}}});
  };
  const Array r = jnp::reshape(jnp::arange(12).astype(DType::f32) * 0.75f, {3, 4});
  const std::vector<float> eager = padded(r).to_vector<float>(),
                           compiled = jit(padded)(r).to_vector<float>();
  REQUIRE(eager.size() == compiled.size());
  for (size_t k = 0; k < eager.size(); ++k) CHECK(compiled[k] == Approx(eager[k]).epsilon(1e-6));
}

TEST_CASE("jnp.pad's statistic modes trace as JAX's _pad_stats and differentiate") {
  auto mean_pad = [](const Array& a) {
    return jnp::pad(a, {{1, 2}}, "mean", {.stat_length = {{2, 1}}});
  };
  const std::string text = to_string(make_jaxpr(mean_pad)(ShapeDtype{DType::f32, {5}}));
  CHECK(text.find("name=_pad") != std::string::npos);
  CHECK(text.find("reduce_sum") != std::string::npos);  // _mean is an inlined jit: no call
  CHECK(text.find("concatenate[dimension=0]") != std::string::npos);
  auto int_mean = [](const Array& a) { return jnp::pad(a, {{1, 1}}, "mean"); };
  const std::string int_text = to_string(make_jaxpr(int_mean)(ShapeDtype{DType::i32, {4}}));
  CHECK(int_text.find("name=round") != std::string::npos);
  CHECK(int_text.find("round[rounding_method=1]") != std::string::npos);
  std::mt19937 rng(12);
  for (const char* mode : {"maximum", "minimum", "mean"}) {
    INFO(mode);
    const Array x = testing::random_f64(rng, {3, 4});
    const std::vector<std::pair<int64_t, int64_t>> widths = {{1, 2}, {2, 1}};
    const int64_t out_size = jnp::pad(x, widths, mode, {.stat_length = {{2, 3}}}).size();
    const Array w = jnp::cos(jnp::arange(out_size).astype(DType::f64));
    auto loss = [&](const Array& a) {
      return jnp::sum(jnp::ravel(jnp::pad(a, widths, mode, {.stat_length = {{2, 3}}})) * w);
    };
    const std::vector<double> g = grad(loss)(x).to_vector<double>();
    const std::vector<double> fd = testing::numeric_grad(loss, x);
    REQUIRE(g.size() == fd.size());
    for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(fd[i]).margin(1e-6));
  }
}

// NumPy's np.pad results (numpy 2.x), quoted.
TEST_CASE("jnp.pad's median, linear_ramp and empty modes pad as NumPy's and JAX's") {
  auto values = [](const Array& a) { return a.astype(DType::f64).to_vector<double>(); };
  using V = std::vector<double>;
  const Array v = array(std::vector<float>{1, 5, 2, 8}, Shape{4});
  CHECK(values(jnp::pad(v, {{2, 3}}, "median")) == V{3.5, 3.5, 1, 5, 2, 8, 3.5, 3.5, 3.5});
  CHECK(values(jnp::pad(v, {{2, 3}}, "median", {.stat_length = {{1, 3}}})) ==
        V{1, 1, 1, 5, 2, 8, 5, 5, 5});
  const Array m = array(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  CHECK(values(jnp::pad(m, {{1, 1}, {1, 0}}, "median")) ==
        V{3.5, 2.5, 3.5, 4.5, 2, 1, 2, 3, 5, 4, 5, 6, 3.5, 2.5, 3.5, 4.5});
  // Integers: the median 3 of [1, 2, 4] (2 here) rounded, in the array's dtype.
  const Array i = jnp::pad(array(std::vector<int32_t>{1, 2, 4}, Shape{3}), {{1, 1}}, "median");
  CHECK(i.dtype() == DType::i32);
  CHECK(values(i) == V{2, 1, 2, 4, 2});

  auto close = [](const V& got, const V& want) {
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(want[k]).margin(1e-6));
  };
  close(values(jnp::pad(v, {{2, 3}}, "linear_ramp")),
        {0, 0.5, 1, 5, 2, 8, 5.3333333, 2.6666667, 0});
  close(values(jnp::pad(v, {{2, 3}}, "linear_ramp", {.end_values = {{-1, 1.5}}})),
        {-1, 0, 1, 5, 2, 8, 5.8333333, 3.6666667, 1.5});
  close(values(jnp::pad(m, {{1, 2}, {2, 1}}, "linear_ramp", {.end_values = {{0, 1}, {2, 3}}})),
        {2, 1, 0, 0, 0,    3,   2, 1.5, 1, 2, 3,   3, 2, 3, 4,
         5, 6, 3, 2, 2.25, 2.5, 3, 3.5, 3, 2, 1.5, 1, 1, 1, 3});
  // Integers: the ramps rounded down, as NumPy's (np.pad([5, -3], 3, "linear_ramp")).
  const Array ramp_i =
      jnp::pad(array(std::vector<int32_t>{5, -3}, Shape{2}), {{3, 3}}, "linear_ramp");
  CHECK(ramp_i.dtype() == DType::i32);
  CHECK(values(ramp_i) == V{0, 1, 3, 5, -3, -2, -1, 0});

  // "empty": JAX's jnp.empty is zeros, concatenated beside each axis.
  CHECK(values(jnp::pad(m, {{1, 0}, {0, 2}}, "empty")) ==
        V{0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0});
  const std::string empty_text = to_string(make_jaxpr([](const Array& a) {
    return jnp::pad(a, {{1, 0}, {0, 2}}, "empty");
  })(numpy_model_ops_test::m23));
  CHECK(empty_text.find("concatenate[dimension=1]") != std::string::npos);

  // Traced as JAX's: linspace jits inside the _pad jit, the median's quantile inside its jit.
  auto ramp = [](const Array& a) {
    return jnp::pad(a, {{1, 2}, {0, 3}}, "linear_ramp", {.end_values = {{0.5, 1}}});
  };
  const std::string text = to_string(make_jaxpr(ramp)(numpy_model_ops_test::m23));
  CHECK(text.find("name=_linspace") != std::string::npos);
  CHECK(text.find("name=_flip") != std::string::npos);
  CHECK(text.find("squeeze[dimensions=(0,)]") != std::string::npos);
  const std::string median_text = to_string(make_jaxpr([](const Array& a) {
    return jnp::pad(a, {{1, 1}}, "median");
  })(numpy_model_ops_test::m23));
  CHECK(median_text.find("name=median") != std::string::npos);
  CHECK(median_text.find("name=quantile") != std::string::npos);

  // Compiled as interpreted, and differentiated as the finite differences say.
  std::mt19937 rng(13);
  for (const char* mode : {"median", "linear_ramp", "empty"}) {
    INFO(mode);
    auto padded = [mode](const Array& a) {
      const std::string_view m = mode;
      if (m == "median") return jnp::pad(a, {{1, 2}, {2, 1}}, mode, {.stat_length = {{2, 3}}});
      if (m == "empty") return jnp::pad(a, {{1, 2}, {2, 1}}, mode);
      return jnp::pad(a, {{1, 2}, {2, 1}}, mode, {.end_values = {{0.25, -1}, {2, 0}}});
    };
    const Array x = testing::random_f64(rng, {3, 4});
    close(values(jit(padded)(x)), values(padded(x)));
    const Array w = jnp::cos(jnp::arange(padded(x).size()).astype(DType::f64));
    auto loss = [&](const Array& a) { return jnp::sum(jnp::ravel(padded(a)) * w); };
    const V g = grad(loss)(x).to_vector<double>();
    const V fd = testing::numeric_grad(loss, x);
    close(g, fd);
  }
}

TEST_CASE("jnp.pad's modes refuse what JAX refuses, naming the mode") {
  const Array x = jnp::ones({2, 3});
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "sideways"),
                    Catch::Contains("unimplemented padding mode 'sideways'"));
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "edge", {.end_values = {{1, 2}}}),
                    Catch::Contains("end_values is for the linear_ramp mode, not 'edge'"));
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "linear_ramp", {.end_values = {{1, 2}, {1, 2}, {3, 4}}}),
                    Catch::Contains("3 end_values pairs for an array of 2 dimensions"));
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "wrap", {.reflect_type = "odd"}),
                    Catch::Contains("reflect_type is for the reflect and symmetric modes"));
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "mean", {.stat_length = {{0, 1}}}),
                    Catch::Contains("stat_length of 0 yields no value for padding"));
  CHECK_THROWS_WITH(
      jnp::pad(x, {{1, 1}}, "edge", {.stat_length = {{1, 1}}}),
      Catch::Contains("stat_length is for the maximum, minimum, mean and median modes"));
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "maximum", {.stat_length = {{1, 1}, {1, 1}, {1, 1}}}),
                    Catch::Contains("3 stat_length pairs for an array of 2 dimensions"));
  CHECK_THROWS_WITH(jnp::pad(jnp::ones({0, 3}), {{1, 0}, {0, 0}}, "mean"),
                    Catch::Contains("cannot apply 'mean' padding to an empty axis"));
  CHECK_THROWS_WITH(jnp::pad(x, {{1, 1}}, "reflect", "sideways"),
                    Catch::Contains("reflect_type must be 'even' or 'odd'"));
  CHECK_THROWS_WITH(jnp::pad(jnp::ones({0, 3}), {{1, 0}, {0, 0}}, "wrap"),
                    Catch::Contains("cannot apply 'wrap' padding to an empty axis"));
  CHECK(jnp::pad(x, {{1, 1}}, "constant").to_vector<float>() ==
        jnp::pad(x, {{1, 1}}).to_vector<float>());
}

}  // namespace pad_modes_test
}  // namespace cjax
