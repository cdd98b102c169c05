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
// (FILL_OR_DROP's fill) must sit at the same places.
void compiled_equals_interpreted(const Jaxpr& j, const std::vector<Array>& args) {
  std::vector<runtime::Buffer> in;
  for (const Array& a : args) in.push_back(a.buffer());
  const auto exe = lower::compile(j, "gather_scatter");
  const auto got = exe->run(in);
  const auto want = runtime::eval_jaxpr(j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
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
}

TEST_CASE("an embedding's gradient and a batched gather compile to the interpreter's results") {
  std::mt19937 rng(12);
  const Array table = randoms(rng, {10, 4});
  const Array tokens = ints({1, 3, 5, 0, 9, 3}, {2, 3});
  auto loss = [](const Array& t, const Array& i) {
    return jnp::sum(jnp::tanh(jnp::matmul(t[i], jnp::transpose(t))));
  };
  compiled_equals_interpreted(make_jaxpr(grad(loss))(table, tokens), {table, tokens});
  // Compiled through jit as well (the CPU back end's executable cache), against grad eagerly.
  const Array g = jit(grad(loss))(table, tokens);
  const Array e = grad(loss)(table, tokens);
  const std::vector<float> gv = g.to_vector<float>(), ev = e.to_vector<float>();
  for (size_t k = 0; k < gv.size(); ++k) CHECK(gv[k] == Approx(ev[k]).epsilon(1e-5).margin(1e-6));
  auto pick = [](const Array& t, const Array& i) { return t[i]; };
  const Array batch = randoms(rng, {3, 10, 4});
  const Array idx = ints({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  compiled_equals_interpreted(make_jaxpr(vmap(pick))(batch, idx), {batch, idx});
  auto along = [](const Array& m, const Array& i) { return jnp::take_along_axis(m, i, 1); };
  const Array order = ints({3, 0, 1, 2, 2, 2, 0, 1, 1, 0, 3, 9}, {3, 4});
  const Array m = randoms(rng, {3, 4});
  compiled_equals_interpreted(make_jaxpr(along)(m, order), {m, order});
  // top_k, and its gradient's gather.
  auto best = [](const Array& a) {
    auto [values, indices] = lax::top_k(a, 2);
    return std::tuple{values, indices, grad([](const Array& b) {
                        return jnp::sum(jnp::exp(lax::top_k(b, 2).first));
                      })(a)};
  };
  compiled_equals_interpreted(make_jaxpr(best)(m), {m});
}

}  // namespace gather_scatter_cpu_test
}  // namespace cjax
