// Issue 21's workload: per-example gradients of a two-layer tanh MLP's squared error over a batch
// of 64, three ways, each jitted and run compiled: `vmap(grad(loss))` over the batch, a `scan`
// over the batch whose body takes one example's gradient (the workaround before vmap), and the
// plain batch gradient (the mean over the batch, what per-example gradients are measured
// against). The per-example ones write batch x the weights' size; the batch gradient sums them.
#include <benchmark/benchmark.h>

#include <random>

#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"

namespace cjax::bench {
namespace {

namespace jnp = cjax::numpy;
constexpr int64_t kBatch = 64;

struct Size {
  int64_t d, hidden;
};
Size size_of(const benchmark::State& state) {
  return {state.range(0), state.range(1)};
}

Array random_array(std::mt19937& rng, const Shape& shape, double scale) {
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  ShapedArray aval(DType::f32, shape);
  std::vector<float> v(static_cast<size_t>(aval.size()));
  for (float& x : v) x = normal(rng);
  return Array::from_buffer(runtime::Buffer::from_data<float>(aval, v));
}

struct Data {
  Array w1, w2, x, t;
};
Data data(Size s) {
  std::mt19937 rng(1);
  return {random_array(rng, {s.d, s.hidden}, 1.0 / std::sqrt(double(s.d))),
          random_array(rng, {s.hidden, s.d}, 1.0 / std::sqrt(double(s.hidden))),
          random_array(rng, {kBatch, s.d}, 1.0), random_array(rng, {kBatch, s.d}, 1.0)};
}

// One example's loss (x, t f32[d]); with a batch (x, t f32[B,d]) it is the batch's mean loss.
Array loss(const Array& w1, const Array& w2, const Array& x, const Array& t) {
  const Array h = jnp::tanh(jnp::matmul(x, w1));
  return jnp::mean(jnp::square(jnp::matmul(h, w2) - t));
}

// Times `step` (a jitted function of the data returning two gradients) after one warm-up call.
template <class Step>
void run(benchmark::State& state, const Step& step, Data d) {
  auto [g1, g2] = step(d.w1, d.w2, d.x, d.t);  // trace and compile
  benchmark::DoNotOptimize(g1);
  for (auto _ : state) {
    auto [a, b] = step(d.w1, d.w2, d.x, d.t);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
  state.SetLabel(std::to_string(g1.shape().size() == 3 ? g1.shape()[0] : 1) + " gradients");
}

void BM_per_example_vmap(benchmark::State& state) {
  const std::optional<int> shared;
  run(state, jit(vmap(grad(loss, argnums<0, 1>), {shared, shared, 0, 0})), data(size_of(state)));
}

void BM_per_example_scan(benchmark::State& state) {
  auto per_example = [](const Array& w1, const Array& w2, const Array& x, const Array& t) {
    auto body = [&](const Array& carry, const std::pair<Array, Array>& example) {
      auto [g1, g2] = grad(loss, argnums<0, 1>)(w1, w2, example.first, example.second);
      return std::pair{carry, std::pair{g1, g2}};
    };
    auto [unused, grads] = scan(body, Array::scalar(0.0, DType::f32), std::pair{x, t});
    return std::tuple{grads.first, grads.second};
  };
  run(state, jit(per_example), data(size_of(state)));
}

void BM_batch_gradient(benchmark::State& state) {
  run(state, jit(grad(loss, argnums<0, 1>)), data(size_of(state)));
}

#define CJAX_SIZES \
  ->Args({128, 512})->Args({256, 1024})->Unit(benchmark::kMillisecond)->UseRealTime()
BENCHMARK(BM_batch_gradient) CJAX_SIZES;
BENCHMARK(BM_per_example_vmap) CJAX_SIZES;
BENCHMARK(BM_per_example_scan) CJAX_SIZES;

}  // namespace
}  // namespace cjax::bench

BENCHMARK_MAIN();
