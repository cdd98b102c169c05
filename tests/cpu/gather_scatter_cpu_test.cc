// gather and the scatters (and top_k) compiled (jit, grad, vmap through the CPU back end) give
// the interpreter's results, out-of-bounds and negative indices, every mode and repeated indices
// included.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"

namespace cjax {
namespace gather_scatter_cpu_test {

namespace jnp = cjax::numpy;

Array ints(std::vector<int32_t> v, Shape s) {
  return array(v, s, DType::i32);
}

Array randoms(std::mt19937& rng, const Shape& shape) {
  return testing::random_f32(rng, shape);
}

// The program compiled by the CPU back end, run on `args`, against the interpreter; NaNs
// (FILL_OR_DROP's fill) must sit at the same places. Returns what the compiled code calls back.
std::vector<std::string> compiled_equals_interpreted(const Jaxpr& j,
                                                     const std::vector<Array>& args) {
  std::vector<runtime::Buffer> in;
  for (const Array& a : args) in.push_back(a.buffer());
  const auto exe = lower::compile(j, "gather_scatter");
  const auto got = exe->run(in);
  const auto want = runtime::eval_jaxpr(j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
  return exe->compile_stats().runtime_calls;
}

// Compiled natively: no runtime call into the interpreter's gather or scatter kernels.
void native_gather_equals_interpreted(const Jaxpr& j, const std::vector<Array>& args) {
  for (const std::string& call : compiled_equals_interpreted(j, args)) {
    INFO(call);
    CHECK(call.find("gather") == std::string::npos);
    CHECK(call.find("scatter") == std::string::npos);
  }
}

TEST_CASE("gather and scatter programs compile to the interpreter's results") {
  std::mt19937 rng(11);
  const Array table = randoms(rng, {6, 4});
  const Array tokens = ints({5, -1, 7, 0, 2, 2}, {2, 3});  // 7: out of bounds
  const Array rows = randoms(rng, {2, 3, 4});
  auto programs = [&](const Array& t, const Array& i, const Array& r) {
    Array picked = t[i];
    Array taken = jnp::take(t, i, 0);
    Array clipped = jnp::take(t, i, 0, "clip");
    Array added = t.at(i).add(r);
    Array replaced = t.at(i).set(r);
    Array scaled = t.at(i).mul(r);
    Array lowest = t.at(i).min(r);
    Array highest = t.at(i).max(r);
    return std::tuple{picked, taken, clipped, added, replaced, scaled, lowest, highest};
  };
  const Jaxpr j = make_jaxpr(programs)(table, tokens, rows);
  // The repeated index 2 makes `set` pick one update: the kernel's order is the same either way.
  compiled_equals_interpreted(j, {table, tokens, rows});
  // Gathers and scatters compile natively: no call into the interpreter's kernels.
  CHECK(lower::compile(j, "gather_scatter")->compile_stats().runtime_calls.empty());
}

TEST_CASE("gather compiles natively for every mode, index dtype, batching dims and fill value") {
  std::mt19937 rng(13);
  // Windows of 2x3 from a 5x7 operand at starts (row, col) that fall outside on either edge.
  const Array operand = randoms(rng, {5, 7});
  for (DType index_type : {DType::i32, DType::i64, DType::u8, DType::i8}) {
    const bool is_unsigned = index_type == DType::u8;
    const Array starts =
        array(std::vector<int32_t>{0, 0, 4, 6, is_unsigned ? 9 : -1, 2, 3, 5, 1, 1}, Shape{5, 2})
            .astype(index_type);
    for (auto mode : {GatherScatterMode::clip, GatherScatterMode::fill_or_drop,
                      GatherScatterMode::promise_in_bounds}) {
      GatherDimensionNumbers dn;
      dn.offset_dims = {1, 2};
      dn.start_index_map = {0, 1};
      auto windows = [&](const Array& x, const Array& i) {
        lax::GatherOptions o;
        o.mode = mode;
        return lax::gather(x, i, dn, {2, 3}, o);
      };
      INFO(short_name(index_type) << " mode " << int(mode));
      native_gather_equals_interpreted(make_jaxpr(windows)(operand, starts), {operand, starts});
    }
  }
  // Integer and bool operands, and a fill value given.
  const Array codes = array(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{6}).astype(DType::u8);
  const Array flags = array(std::vector<bool>{true, false, true, false, false, true}, Shape{6});
  const Array at = ints({0, 5, 6, -2}, {4, 1});
  GatherDimensionNumbers rows;
  rows.collapsed_slice_dims = {0};
  rows.start_index_map = {0};
  for (const Array& x : {codes, flags}) {
    auto pick = [&](const Array& a, const Array& i) {
      lax::GatherOptions o;
      o.mode = GatherScatterMode::fill_or_drop;
      return lax::gather(a, i, rows, {1}, o);
    };
    native_gather_equals_interpreted(make_jaxpr(pick)(x, at), {x, at});
  }
  auto filled = [&](const Array& a, const Array& i) {
    lax::GatherOptions o;
    o.mode = GatherScatterMode::fill_or_drop;
    o.fill_value = 7.5;
    return lax::gather(a, i, rows, {1}, o);
  };
  const Array values = randoms(rng, {6});
  native_gather_equals_interpreted(make_jaxpr(filled)(values, at), {values, at});
  // Batching dims (vmap of an indexed lookup): operand dim 0 follows the indices' dim 0.
  GatherDimensionNumbers batched;
  batched.offset_dims = {1};
  batched.collapsed_slice_dims = {1};
  batched.start_index_map = {1};
  batched.operand_batching_dims = {0};
  batched.start_indices_batching_dims = {0};
  auto per_row = [&](const Array& a, const Array& i) {
    return lax::gather(a, i, batched, {1, 1, 4}, {});
  };
  const Array cube = randoms(rng, {3, 5, 4});
  const Array which = ints({4, 0, 2}, {3, 1});
  native_gather_equals_interpreted(make_jaxpr(per_row)(cube, which), {cube, which});
}

TEST_CASE("scatters compile natively: windows on either edge, every mode, dtype and combiner") {
  std::mt19937 rng(14);
  // 2x3 windows into a 5x7 operand at starts that fall outside on either edge, one repeated.
  const Array operand = randoms(rng, {5, 7});
  const Array updates = randoms(rng, {5, 2, 3});
  const Array starts = ints({0, 0, 4, 6, -1, 2, 3, 5, 0, 0}, {5, 2});
  ScatterDimensionNumbers windows;
  windows.update_window_dims = {1, 2};
  windows.scatter_dims_to_operand_dims = {0, 1};
  for (auto mode : {GatherScatterMode::clip, GatherScatterMode::fill_or_drop,
                    GatherScatterMode::promise_in_bounds}) {
    auto all = [&](const Array& x, const Array& i, const Array& u) {
      lax::ScatterOptions o;
      o.mode = mode;
      return std::tuple{lax::scatter(x, i, u, windows, o), lax::scatter_add(x, i, u, windows, o),
                        lax::scatter_mul(x, i, u, windows, o),
                        lax::scatter_min(x, i, u, windows, o),
                        lax::scatter_max(x, i, u, windows, o)};
    };
    INFO("mode " << int(mode));
    native_gather_equals_interpreted(make_jaxpr(all)(operand, starts, updates),
                                     {operand, starts, updates});
  }
  // Integers (unsigned min and max), bools (add is or, mul is and) and u8 indices.
  ScatterDimensionNumbers rows;
  rows.inserted_window_dims = {0};
  rows.scatter_dims_to_operand_dims = {0};
  const Array at = ints({5, 0, 5, 2}, {4, 1}).astype(DType::u8);
  const Array codes = array(std::vector<int32_t>{9, 2, 200, 4, 5, 6}, Shape{6}).astype(DType::u8);
  const Array code_updates = array(std::vector<int32_t>{1, 250, 3, 7}, Shape{4}).astype(DType::u8);
  const Array flags = array(std::vector<bool>{true, false, true, false, false, true}, Shape{6});
  const Array flag_updates = array(std::vector<bool>{false, true, true, false}, Shape{4});
  for (const auto& [x, u] : {std::pair{codes, code_updates}, std::pair{flags, flag_updates}}) {
    auto all = [&](const Array& a, const Array& i, const Array& v) {
      return std::tuple{lax::scatter_add(a, i, v, rows), lax::scatter_mul(a, i, v, rows),
                        lax::scatter_min(a, i, v, rows), lax::scatter_max(a, i, v, rows)};
    };
    native_gather_equals_interpreted(make_jaxpr(all)(x, at, u), {x, at, u});
  }
  // NaN in min and max propagates, as the kernel's.
  const Array with_nan = array(std::vector<float>{1.f, NAN, 3.f, 4.f, 5.f, 6.f}, Shape{6});
  const Array nan_updates = array(std::vector<float>{NAN, 0.f, 2.f, 9.f}, Shape{4});
  const Array at32 = ints({5, 1, 5, 2}, {4, 1});
  auto extremes = [&](const Array& a, const Array& i, const Array& v) {
    return std::tuple{lax::scatter_min(a, i, v, rows), lax::scatter_max(a, i, v, rows)};
  };
  native_gather_equals_interpreted(make_jaxpr(extremes)(with_nan, at32, nan_updates),
                                   {with_nan, at32, nan_updates});
  // Batching dims: vmap of an indexed add, each row of the operand its own index.
  auto add_at = [](const Array& t, const Array& i, const Array& r) { return t.at(i).add(r); };
  const Array tables = randoms(rng, {3, 6, 2});
  const Array which = ints({5, 0, 5, 1, 1, 1}, {3, 2});
  const Array adds = randoms(rng, {3, 2, 2});
  native_gather_equals_interpreted(make_jaxpr(vmap(add_at))(tables, which, adds),
                                   {tables, which, adds});
}

TEST_CASE("an embedding's gradient and a batched gather compile to the interpreter's results") {
  std::mt19937 rng(12);
  const Array table = randoms(rng, {10, 4});
  const Array tokens = ints({1, 3, 5, 0, 9, 3}, {2, 3});
  auto loss = [](const Array& t, const Array& i) {
    return jnp::sum(jnp::tanh(jnp::matmul(t[i], jnp::transpose(t))));
  };
  native_gather_equals_interpreted(make_jaxpr(grad(loss))(table, tokens), {table, tokens});
  // Compiled through jit as well (the CPU back end's executable cache), against grad eagerly.
  const Array g = jit(grad(loss))(table, tokens);
  const Array e = grad(loss)(table, tokens);
  const std::vector<float> gv = g.to_vector<float>(), ev = e.to_vector<float>();
  for (size_t k = 0; k < gv.size(); ++k) CHECK(gv[k] == Approx(ev[k]).epsilon(1e-5).margin(1e-6));
  auto pick = [](const Array& t, const Array& i) { return t[i]; };
  const Array batch = randoms(rng, {3, 10, 4});
  const Array idx = ints({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  native_gather_equals_interpreted(make_jaxpr(vmap(pick))(batch, idx), {batch, idx});
  auto along = [](const Array& m, const Array& i) { return jnp::take_along_axis(m, i, 1); };
  const Array order = ints({3, 0, 1, 2, 2, 2, 0, 1, 1, 0, 3, 9}, {3, 4});
  const Array m = randoms(rng, {3, 4});
  native_gather_equals_interpreted(make_jaxpr(along)(m, order), {m, order});
  // top_k, and its gradient's gather.
  auto best = [](const Array& a) {
    auto [values, indices] = lax::top_k(a, 2);
    return std::tuple{values, indices, grad([](const Array& b) {
                        return jnp::sum(jnp::exp(lax::top_k(b, 2).first));
                      })(a)};
  };
  native_gather_equals_interpreted(make_jaxpr(best)(m), {m});
}

}  // namespace gather_scatter_cpu_test
}  // namespace cjax
