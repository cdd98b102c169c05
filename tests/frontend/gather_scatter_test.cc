// NumPy's advanced indexing, jnp.take / take_along_axis and x.at[...] through gather and the
// scatters: the jaxprs JAX 0.11.2 printed (tests/golden/jax_0_11_2/model_ops.md) and, for cases
// it was not asked for, those its indexing code builds (tests/golden/derived/gather_scatter.md);
// values against loops over the indices, gradients against finite differences, and vmap against
// a loop over the batch.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace gather_scatter_test {

namespace jnp = cjax::numpy;
using testing::f32;
using testing::i32;
using testing::numeric_grad;
using testing::random_f64;

std::string jax(const std::string& title) {
  return golden::jax_case("model_ops.md", title);
}
std::string derived(const std::string& title) {
  return golden::derived_case("gather_scatter.md", title);
}

Array ints(std::vector<int32_t> v, Shape s) {
  return array(v, s, DType::i32);
}

void check_close(const Array& got, const std::vector<double>& want) {
  const std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(want[i]).epsilon(1e-6).margin(1e-7));
}

TEST_CASE("embedding lookups, take_along_axis and .at print as JAX 0.11.2 printed them") {
  const ShapeDtype emb = f32({10, 4}), tok = i32({2, 3});
  auto take = [](const Array& e, const Array& t) { return jnp::take(e, t, 0); };
  CHECK(to_string(make_jaxpr(take)(emb, tok)) == jax("embedding take"));
  auto index = [](const Array& e, const Array& t) { return e[t]; };
  CHECK(to_string(make_jaxpr(index)(emb, tok)) == jax("embedding index"));
  auto loss = [](const Array& e, const Array& t) { return jnp::sum(jnp::power(e[t], 2)); };
  CHECK(to_string(make_jaxpr(grad(loss))(emb, tok)) == jax("embedding grad"));
  auto along = [](const Array& a, const Array& i) { return jnp::take_along_axis(a, i, 1); };
  CHECK(to_string(make_jaxpr(along)(f32({3, 4}), i32({3, 1}))) == jax("take_along_axis"));
  auto set = [](const Array& a) { return a.at(1).set(0.0); };
  CHECK(to_string(make_jaxpr(set)(f32({3, 4}))) == jax("at set"));
  auto add = [](const Array& a, const Array& i, const Array& v) { return a.at(i).add(v); };
  CHECK(to_string(make_jaxpr(add)(f32({3}), i32({3}), f32({3}))) == jax("at add indices"));
  // One statement per step: C++ leaves the order of an expression's operands open.
  auto mul_min_max = [](const Array& a, const Array& i) {
    Array m = a.at(i).mul(2.0);
    Array lo = a.at(i).min(0.0);
    Array hi = a.at(i).max(0.0);
    return std::tuple{m, lo, hi};
  };
  CHECK(to_string(make_jaxpr(mul_min_max)(f32({3}), i32({1}))) == jax("at mul/min/max"));
}

TEST_CASE("the scatters' printed jaxprs read back: `scatter-add` is one primitive's name") {
  for (const char* title : {"embedding grad", "at add indices", "at mul/min/max"}) {
    INFO(title);
    const std::string text = jax(title);
    CHECK(to_string(*parse_jaxpr(text)) == text);
  }
}

TEST_CASE("other advanced indexing prints as JAX's indexing code builds it") {
  const ShapeDtype x = f32({64, 32}), idx = i32({4, 16});
  auto columns = [](const Array& a, const Array& b) { return a[{Slice{}, b}]; };
  CHECK(to_string(make_jaxpr(columns)(x, idx)) == derived("x[:, idx]"));
  auto pairs = [](const Array& a, const Array& b, const Array& c) { return a[{b, c}]; };
  CHECK(to_string(make_jaxpr(pairs)(x, idx, idx)) == derived("x[idx1, idx2]"));
  auto set = [](const Array& a, const Array& b, const Array& c) { return a.at(b).set(c); };
  CHECK(to_string(make_jaxpr(set)(x, idx, f32({4, 16, 32}))) == derived("x.at[idx].set(y)"));
  // Two scatter-adds of one dtype share JAX's cached update jaxpr, printed once.
  auto twice = [](const Array& a, const Array& b, const Array& c) {
    const Array once = a.at(b).add(c);
    return once.at(b).add(c);
  };
  CHECK(to_string(make_jaxpr(twice)(f32({8, 3}), i32({5}), f32({5, 3}))) ==
        derived("two scatter-adds"));
  auto batched = [](const Array& a, const Array& b) { return a[b]; };
  CHECK(to_string(make_jaxpr(vmap(batched))(f32({2, 8, 3}), i32({2, 5}))) ==
        derived("vmap of x[idx]"));
}

TEST_CASE("integer-array indexing gathers what NumPy's advanced indexing does") {
  const Array x = jnp::reshape(jnp::arange(24.0f), {4, 6});
  const Array idx = ints({3, -1, 0, 2}, {2, 2});
  const Array r = x[idx];  // rows 3, 3, 0, 2
  REQUIRE(r.shape() == Shape{2, 2, 6});
  const std::vector<float> v = r.to_vector<float>();
  const int32_t want_rows[] = {3, 3, 0, 2};
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 6; ++j) CHECK(v[k * 6 + j] == float(want_rows[k] * 6 + j));
  // Two arrays broadcast together: x[[0, 3], [[1], [5]]] is [[x[0,1], x[3,1]], [x[0,5], x[3,5]]].
  const Array p = x[{ints({0, 3}, {2}), ints({1, 5}, {2, 1})}];
  CHECK(p.shape() == Shape{2, 2});
  CHECK(p.to_vector<float>() == std::vector<float>{1, 19, 5, 23});
  // A column pick beside a slice, and an array index with a scalar one.
  CHECK(x[{Slice{1, 3, std::nullopt}, ints({5, 0}, {2})}].to_vector<float>() ==
        std::vector<float>{11, 6, 17, 12});
  CHECK(x[{ints({1, 2}, {2}), 4}].to_vector<float>() == std::vector<float>{10, 16});
  // Advanced indices apart (x3[idx, :, idx]) put the broadcast dims first, as NumPy.
  const Array x3 = jnp::reshape(jnp::arange(24.0f), {2, 3, 4});
  const Array apart = x3[{ints({1, 0}, {2}), Slice{}, ints({3, 2}, {2})}];
  CHECK(apart.shape() == Shape{2, 3});
  CHECK(apart.to_vector<float>() == std::vector<float>{15, 19, 23, 2, 6, 10});
  // newaxis and a strided slice beside an array index.
  CHECK(x[{NewAxisIndex{}, ints({1}, {1}), Slice{0, 6, 2}}].shape() == Shape{1, 1, 3});
  CHECK(x[{ints({1}, {1}), Slice{5, std::nullopt, -2}}].to_vector<float>() ==
        std::vector<float>{11, 9, 7});
  // PROMISE_IN_BOUNDS clamps an index past the end, as XLA's gather.
  CHECK(x[ints({9}, {1})].to_vector<float>() == x[3].to_vector<float>());
}

TEST_CASE("take and take_along_axis: fill, clip and wrap modes") {
  const Array x = jnp::reshape(jnp::arange(12.0f), {3, 4});
  const std::vector<float> filled = jnp::take(x, ints({0, 11, 12, -1}, {4})).to_vector<float>();
  CHECK(filled[0] == 0);
  CHECK(filled[1] == 11);
  CHECK(std::isnan(filled[2]));  // out of bounds: the fill value
  CHECK(filled[3] == 11);
  CHECK(jnp::take(x, ints({5, -7}, {2}), 1, "clip").to_vector<float>() ==
        std::vector<float>{3, 0, 7, 4, 11, 8});
  CHECK(jnp::take(x, ints({5, -7}, {2}), 1, "wrap").to_vector<float>() ==
        std::vector<float>{1, 1, 5, 5, 9, 9});
  CHECK(jnp::take(x, ints({7}, {1}), 0, "fill", -1.0).to_vector<float>() ==
        std::vector<float>{-1, -1, -1, -1});
  // take_along_axis with argsort's order sorts each row.
  const Array m = array(std::vector<float>{3, 1, 2, 9, 7, 8}, Shape{2, 3});
  const Array order = jnp::argsort(m, 1);
  CHECK(jnp::take_along_axis(m, order, 1).to_vector<float>() ==
        std::vector<float>{1, 2, 3, 7, 8, 9});
  // An index dim of size 1 broadcasts against the array's.
  CHECK(jnp::take_along_axis(m, ints({2, 0}, {1, 2}), 1).to_vector<float>() ==
        std::vector<float>{2, 3, 8, 9});
  CHECK_THROWS_WITH(jnp::take(x, ints({0}, {1}), 0, "nearest"), Catch::Contains("mode must be"));
  CHECK_THROWS_WITH(jnp::take_along_axis(m, ints({0}, {1}), 1),
                    Catch::Contains("the same number of dimensions"));
}

TEST_CASE(".at[...]: set, add, multiply, min and max, repeated and out-of-bounds indices") {
  const Array x = array(std::vector<float>{1, 2, 3, 4}, Shape{4});
  const Array idx = ints({1, 1, 3, 7}, {4});  // 7 is out of bounds: dropped
  const Array y = array(std::vector<float>{10, 20, 30, 40}, Shape{4});
  CHECK(x.at(idx).add(y).to_vector<float>() == std::vector<float>{1, 32, 3, 34});
  CHECK(x.at(idx).multiply(y).to_vector<float>() == std::vector<float>{1, 400, 3, 120});
  CHECK(x.at(idx).min(y).to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(x.at(idx).max(y).to_vector<float>() == std::vector<float>{1, 20, 3, 30});
  const std::vector<float> set = x.at(idx).set(y).to_vector<float>();
  CHECK((set[1] == 10 || set[1] == 20));  // one of the repeated updates wins
  CHECK(set[3] == 30);
  CHECK(x.at(2).set(9.0f).to_vector<float>() == std::vector<float>{1, 2, 9, 4});
  CHECK(x.at(Slice{1, 3, std::nullopt}).add(1.0f).to_vector<float>() ==
        std::vector<float>{1, 3, 4, 4});
  CHECK(x.at(-1).mul(2.0f).to_vector<float>() == std::vector<float>{1, 2, 3, 8});
  // An embedding's gradient: rows accumulated per token.
  const Array grads = jnp::zeros({3, 2}).at(ints({2, 0, 2}, {3})).add(jnp::ones({3, 2}));
  CHECK(grads.to_vector<float>() == std::vector<float>{1, 1, 0, 0, 2, 2});
  // get with a mode: out of bounds reads the fill value.
  CHECK(
      std::isnan(x.at(ints({9}, {1})).get(GatherScatterMode::fill_or_drop).to_vector<float>()[0]));
  CHECK(x.at(ints({9}, {1})).get(GatherScatterMode::clip).to_vector<float>()[0] == 4);
  CHECK(x.at(ints({9}, {1})).get(GatherScatterMode::fill_or_drop, 0.5).item() == 0.5);
}

TEST_CASE("gradients through gather and the scatters match finite differences") {
  std::mt19937 rng(3);
  const Array w = random_f64(rng, {5, 3});
  const Array idx = ints({4, 0, 4, -2}, {4});
  auto embed = [&](const Array& a) { return jnp::sum(jnp::sin(a[idx]) * a[idx]); };
  check_close(grad(embed)(w), numeric_grad(embed, w));
  auto taken = [&](const Array& a) { return jnp::sum(jnp::exp(jnp::take(a, idx, 0, "clip"))); };
  check_close(grad(taken)(w), numeric_grad(taken, w));
  const Array u = random_f64(rng, {4, 3});
  // scatter-add: both operand and updates.
  auto added = [&](const Array& a) { return jnp::sum(jnp::sin(a.at(idx).add(u * a[idx]))); };
  check_close(grad(added)(w), numeric_grad(added, w));
  // scatter (replace) with a repeated index: only the winning update carries a gradient.
  auto replaced = [&](const Array& upd) { return jnp::sum(jnp::sin(w.at(idx).set(upd)) * w); };
  check_close(grad(replaced)(u), numeric_grad(replaced, u));
  auto replaced_operand = [&](const Array& a) { return jnp::sum(jnp::sin(a.at(idx).set(u))); };
  check_close(grad(replaced_operand)(w), numeric_grad(replaced_operand, w));
  // scatter-mul (unique indices), and scatter-max away from ties.
  const Array unique = ints({1, 3}, {2});
  const Array v = random_f64(rng, {2, 3});
  auto scaled = [&](const Array& a) {
    return jnp::sum(
        jnp::cos(a.at(unique).multiply(v, {.unique_indices = true, .mode = std::nullopt})));
  };
  check_close(grad(scaled)(w), numeric_grad(scaled, w));
  auto scaled_updates = [&](const Array& upd) {
    return jnp::sum(
        jnp::cos(w.at(unique).multiply(upd, {.unique_indices = true, .mode = std::nullopt})));
  };
  check_close(grad(scaled_updates)(v), numeric_grad(scaled_updates, v));
  auto maxed = [&](const Array& a) { return jnp::sum(jnp::sin(a.at(idx).max(u)) * a); };
  check_close(grad(maxed)(w), numeric_grad(maxed, w));
  auto maxed_updates = [&](const Array& upd) { return jnp::sum(jnp::sin(w.at(idx).max(upd))); };
  check_close(grad(maxed_updates)(u), numeric_grad(maxed_updates, u));
  // take_along_axis's batching dims transpose too.
  const Array order = ints({2, 0, 1, 1, 1, 0, 0, 2, 2, 1, 0, 2, 0, 0, 1}, {5, 3});
  auto along = [&](const Array& a) {
    return jnp::sum(jnp::tanh(jnp::take_along_axis(a, order, 1)));
  };
  check_close(grad(along)(w), numeric_grad(along, w));
}

TEST_CASE("vmap of gather and scatter-add equals a loop over the batch") {
  std::mt19937 rng(5);
  const Array xs = random_f64(rng, {3, 6, 2});
  const Array is = ints({0, 5, 5, 1, 2, 3, -1, 4, 0}, {3, 3});
  const Array ys = random_f64(rng, {3, 3, 2});
  auto pick = [](const Array& a, const Array& b) { return a[b]; };
  auto bump = [](const Array& a, const Array& b, const Array& c) { return a.at(b).add(c); };
  for (int64_t k = 0; k < 3; ++k) {
    CHECK(vmap(pick)(xs, is)[k].to_vector<double>() == pick(xs[k], is[k]).to_vector<double>());
    CHECK(vmap(pick, {0, std::nullopt})(xs, is[1])[k].to_vector<double>() ==
          pick(xs[k], is[1]).to_vector<double>());
    CHECK(vmap(pick, {std::nullopt, 0})(xs[0], is)[k].to_vector<double>() ==
          pick(xs[0], is[k]).to_vector<double>());
    CHECK(vmap(bump)(xs, is, ys)[k].to_vector<double>() ==
          bump(xs[k], is[k], ys[k]).to_vector<double>());
    CHECK(vmap(bump, {0, std::nullopt, 0})(xs, is[2], ys)[k].to_vector<double>() ==
          bump(xs[k], is[2], ys[k]).to_vector<double>());
    CHECK(vmap(bump, {std::nullopt, 0, std::nullopt})(xs[1], is, ys[0])[k].to_vector<double>() ==
          bump(xs[1], is[k], ys[0]).to_vector<double>());
  }
}

TEST_CASE("gather and scatter refuse inconsistent dimension numbers by name") {
  const Array x = jnp::zeros({4, 3});
  const Array i = ints({1, 2}, {2, 1});
  const GatherDimensionNumbers ok{{1}, {0}, {0}, {}, {}};
  CHECK(lax::gather(x, i, ok, {1, 3}).shape() == Shape{2, 3});
  CHECK_THROWS_WITH(lax::gather(x, i, ok, {2, 3}),
                    Catch::Contains("gather: slice_sizes (2, 3) must be 0 or 1 at collapsed"));
  CHECK_THROWS_WITH(lax::gather(x, i, {{1}, {0}, {0, 1}, {}, {}}, {1, 3}),
                    Catch::Contains("gather: the indices' last dimension"));
  CHECK_THROWS_WITH(lax::gather(x, jnp::zeros({2, 1}), ok, {1, 3}),
                    Catch::Contains("indices must have an integer dtype"));
  const ScatterDimensionNumbers sdn{{1}, {0}, {0}, {}, {}};
  CHECK_THROWS_WITH(lax::scatter_add(x, i, jnp::zeros({2, 4}), sdn),
                    Catch::Contains("scatter-add: update window dim 1 (size 4) is larger"));
  CHECK_THROWS_WITH(lax::scatter_add(x, i, jnp::zeros({3, 3}), sdn),
                    Catch::Contains("must match the indices' batch dim"));
}

TEST_CASE("dimension numbers and modes read back from JAX's text, older forms included") {
  const auto dn = GatherDimensionNumbers::from_param(OpaqueParam{
      "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))"});
  CHECK(dn.offset_dims == std::vector<int64_t>{1});
  CHECK(dn.operand_batching_dims.empty());
  CHECK(dn.to_param().as<OpaqueParam>().text ==
        "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), "
        "operand_batching_dims=(), start_indices_batching_dims=())");
  const auto shifted = GatherDimensionNumbers::from_param(OpaqueParam{
      "GatherDimensionNumbers(offset_dims=(0, np.int64(2)), collapsed_slice_dims=(np.int64(1),), "
      "start_index_map=(np.int64(1),), operand_batching_dims=(), start_indices_batching_dims=())"});
  CHECK(shifted.offset_dims == std::vector<int64_t>{0, 2});
  CHECK(shifted.to_param().as<OpaqueParam>().text.find("offset_dims=(0, np.int64(2))") !=
        std::string::npos);
  CHECK(gather_scatter_mode(OpaqueParam{"GatherScatterMode.CLIP"}) == GatherScatterMode::clip);
  CHECK_THROWS_WITH(gather_scatter_mode(OpaqueParam{"GatherScatterMode.ONE_HOT"}),
                    Catch::Contains("mode must be"));
  CHECK_THROWS_WITH(GatherDimensionNumbers::from_param(OpaqueParam{"GatherDimensionNumbers(x=1)"}),
                    Catch::Contains("GatherDimensionNumbers expected"));
  CHECK(opaque_text_is_exact("GatherScatterMode.FILL_OR_DROP"));
  CHECK_FALSE(opaque_text_is_exact("<function f at 0xXXXX>"));
}

}  // namespace gather_scatter_test
}  // namespace cjax
