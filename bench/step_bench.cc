// The workload, side by side in one run: block/mlp's value-and-grad step w.r.t. W1 and
// W2 compiled by cjax (plain and checkpointed), and the floor: the step's five matrix products
// (x@W1, h@W2, dz@W2^T, h^T@dz, x^T@du) back to back through OpenBLAS. Then the time to trace,
// differentiate and compile a tanh MLP chain, and how it grows with depth.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"
#include "compiler/cpu/executable.h"
#include "examples/registry.h"
#include "ir/parse/parser.h"
#include "passes/pipeline.h"
#include "runtime/blas_dot.h"

namespace cjax {
namespace {

struct CompiledStep {
  std::shared_ptr<const lower::Executable> fwd, bwd;
  std::vector<runtime::Buffer> inputs;
  runtime::Buffer ct;
};

// The step with gradients for W1 and W2 only (arguments 1 and 2 of block/mlp); as grad runs it
// (cheap residuals recomputed in the backward program) or, with `jax_residuals`, keeping all the
// residuals JAX's programs return.
CompiledStep compile_step(const char* name, bool jax_residuals = false) {
  const examples::Example& ex = examples::get(name);
  Jaxpr j = ex.make_jaxpr();
  StepOptions options;
  options.wrt = {false, true, true, false};
  options.recompute_cheap_residuals = !jax_residuals;
  TrainingStep p = training_step(j, options);
  return {lower::compile(p.fwd, name), lower::compile(p.bwd, name), ex.default_inputs(),
          runtime::Buffer::full(j.out_avals()[0], 1.0)};
}

// One training step: the forward executable, then the backward one on its residuals. Returns
// the residuals' bytes.
size_t step_once(CompiledStep& s) {
  std::vector<runtime::Buffer> f = s.fwd->run(s.inputs);
  std::vector<runtime::Buffer> b_in(f.begin() + 1, f.end());
  size_t residual_bytes = 0;
  for (const auto& r : b_in) residual_bytes += r.nbytes();
  b_in.push_back(s.ct);
  f.clear();
  benchmark::DoNotOptimize(s.bwd->run(b_in));
  return residual_bytes;
}

void run_step(benchmark::State& state, const char* name, bool jax_residuals = false) {
  CompiledStep s = compile_step(name, jax_residuals);
  size_t residual_bytes = 0;
  for (auto _ : state) residual_bytes = step_once(s);
  state.counters["residual_MiB"] = static_cast<double>(residual_bytes) / (1 << 20);
}

void BM_cjax_step(benchmark::State& state) {
  run_step(state, "block/mlp");
}
void BM_cjax_step_jax_residuals(benchmark::State& state) {
  run_step(state, "block/mlp", true);
}
void BM_cjax_step_checkpointed(benchmark::State& state) {
  run_step(state, "block/mlp_checkpoint");
}

// C[m,n] = op(A) op(B) with row-major operands, as the step's products need them.
void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
}

constexpr int kB = 64, kD = 512, kH = 8192;  // block/mlp: x[B,D], W1[D,H], W2[H,D]

// The floor: the step's five matrix products, writing into buffers of their own.
struct FiveGemms {
  std::vector<float> h = std::vector<float>(kB * kH), z = std::vector<float>(kB * kD),
                     dh = std::vector<float>(kB * kH), dw2 = std::vector<float>(kH * kD),
                     dw1 = std::vector<float>(kD * kH);
  void operator()(const float* x, const float* w1, const float* w2) {
    gemm(false, false, kB, kH, kD, x, w1, h.data());                // x @ W1
    gemm(false, false, kB, kD, kH, h.data(), w2, z.data());         // h @ W2
    gemm(false, true, kB, kH, kD, z.data(), w2, dh.data());         // dz @ W2^T
    gemm(true, false, kH, kD, kB, h.data(), z.data(), dw2.data());  // h^T @ dz
    gemm(true, false, kD, kH, kB, x, dh.data(), dw1.data());        // x^T @ du
    benchmark::DoNotOptimize(dw1.data());
  }
};

void BM_floor_five_gemms(benchmark::State& state) {
  std::vector<float> x(kB * kD, 0.5f), w1(kD * kH, 0.01f), w2(kH * kD, 0.01f);
  FiveGemms floor;
  for (auto _ : state) floor(x.data(), w1.data(), w2.data());
}

// The same work, paired: each iteration runs the floor, the cjax step, its checkpointed twin and
// x@W1 alone back to back, all reading the same x, W1 and W2, so that a change in the machine's
// load, and what the caches hold, hit all four alike. Reports the medians (ms) and the median of
// each iteration's ratios: the step over the floor, and what the twin costs over the step in
// units of the x@W1 it recomputes. On a shared machine whose speed drifts between runs, these
// paired ratios are what the targets compare.
void BM_paired_step_floor_twin(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  CompiledStep plain = compile_step("block/mlp"), twin = compile_step("block/mlp_checkpoint");
  twin.inputs = plain.inputs;  // the same buffers
  const float* x = plain.inputs[0].as<float>();
  const float* w1 = plain.inputs[1].as<float>();
  const float* w2 = plain.inputs[2].as<float>();
  FiveGemms five_gemms;
  auto floor = [&] { five_gemms(x, w1, w2); };
  auto x_w1 = [&] { gemm(false, false, kB, kH, kD, x, w1, five_gemms.h.data()); };
  auto time_ms = [](auto&& f) {
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  std::vector<double> floor_ms, step_ms, twin_ms, xw1_ms, step_ratio, twin_extra;
  for (auto _ : state) {
    floor_ms.push_back(time_ms(floor));
    step_ms.push_back(time_ms([&] { step_once(plain); }));
    twin_ms.push_back(time_ms([&] { step_once(twin); }));
    xw1_ms.push_back(time_ms(x_w1));
    step_ratio.push_back(step_ms.back() / floor_ms.back());
    twin_extra.push_back((twin_ms.back() - step_ms.back()) / xw1_ms.back());
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  state.counters["floor_ms"] = median(floor_ms);
  state.counters["step_ms"] = median(step_ms);
  state.counters["twin_ms"] = median(twin_ms);
  state.counters["xW1_ms"] = median(xw1_ms);
  state.counters["step/floor"] = median(step_ratio);
  state.counters["twin_extra/xW1"] = median(twin_extra);
}

// One product x[m,k] @ w[k,n] compiled as a native loop nest or as a call into OpenBLAS: where
// the loops win is where DotPath::by_size uses them (kNativeDotMaxMultiplyAdds).
void dot(benchmark::State& state, lower::DotPath path) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const std::string text = fmt::format(
      "{{ lambda ; a:f32[{},{}] b:f32[{},{}]. let c:f32[{},{}] = dot_general["
      "dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32] a b in (c,) }}",
      m, k, k, n, m, n);
  JaxprRef j = parse_jaxpr(text);
  lower::CompileOptions options;
  options.dot_path = path;
  auto exe = lower::compile(*j, "dot", options);
  std::vector<runtime::Buffer> in = {runtime::Buffer::full(j->in_avals()[0], 0.5),
                                     runtime::Buffer::full(j->in_avals()[1], 0.25)};
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(in));
  state.counters["multiply_adds"] = static_cast<double>(m * k * n);
}
void BM_dot_native(benchmark::State& state) {
  dot(state, lower::DotPath::native);
}
void BM_dot_blas(benchmark::State& state) {
  dot(state, lower::DotPath::blas);
}

// h = tanh(h @ W_i + b_i), width 64, batch 8: trace, differentiate (vjp programs) and, with
// `compile`, compile both executables.
void chain(benchmark::State& state, bool compile) {
  const int depth = static_cast<int>(state.range(0));
  namespace jnp = cjax::numpy;
  size_t functions = 0, steps = 0;
  double lower_ms = 0, optimize_ms = 0, jit_ms = 0;
  std::vector<Array> ws, bs;  // the parameters exist before the step is traced
  for (int i = 0; i < depth; ++i) {
    ws.push_back(jnp::zeros({64, 64}));
    bs.push_back(jnp::zeros({64}));
  }
  const Array x0 = jnp::zeros({8, 64});
  for (auto _ : state) {
    auto loss = [depth](const std::vector<Array>& w, const std::vector<Array>& b, const Array& x) {
      Array h = x;
      for (int i = 0; i < depth; ++i) h = jnp::tanh(jnp::dot(h, w[i]) + b[i]);
      return jnp::sum(h);
    };
    Jaxpr j = make_jaxpr(loss)(ws, bs, x0);
    StepOptions options;
    options.recompute_cheap_residuals = false;
    TrainingStep p = training_step(j, options);
    if (!compile) continue;
    auto fwd = lower::compile(p.fwd, "chain"), bwd = lower::compile(p.bwd, "chain");
    functions = fwd->compile_stats().functions + bwd->compile_stats().functions;
    steps = fwd->compile_stats().steps + bwd->compile_stats().steps;
    lower_ms = fwd->compile_stats().lower_ms + bwd->compile_stats().lower_ms;
    optimize_ms = fwd->compile_stats().optimize_ms + bwd->compile_stats().optimize_ms;
    jit_ms = fwd->compile_stats().jit_ms + bwd->compile_stats().jit_ms;
  }
  state.SetComplexityN(depth);
  if (compile) {
    state.counters["functions"] = static_cast<double>(functions);
    state.counters["steps"] = static_cast<double>(steps);
    // The last iteration's compile phases (ms): lowering with planning, MLIR passes, LLVM JIT.
    state.counters["lower_ms"] = lower_ms;
    state.counters["optimize_ms"] = optimize_ms;
    state.counters["jit_ms"] = jit_ms;
  }
}

// A cached jit call against the executable it runs, paired in one loop: value_and_grad of a small
// two-layer MLP (8x16 and 16x4 weights, a batch of 3), where the call's overhead matters most.
// The first call (trace, differentiate, compile) is timed once.
Array small_mlp_loss(const Array& w1, const Array& w2, const Array& x) {
  namespace jnp = cjax::numpy;
  Array h = jnp::tanh(jnp::dot(x, w1));
  return jnp::mean(jnp::square(jnp::dot(h, w2)));
}

Array ramp(Shape shape, double start) {
  ShapedArray a(DType::f32, shape);
  std::vector<float> v(static_cast<size_t>(a.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(start + 0.01 * double(i % 17));
  return Array::from_buffer(runtime::Buffer::from_data<float>(a, v));
}

void BM_paired_jit_call_executable(benchmark::State& state) {
  const Array w1 = ramp({8, 16}, -0.05), w2 = ramp({16, 4}, 0.02), x = ramp({3, 8}, 0.1);
  // One jitted step for every run of this benchmark: the first call, timed, traces and compiles.
  static auto step = jit(value_and_grad(small_mlp_loss, argnums<0, 1>));
  static const double first_ms = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(step(w1, w2, x));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }();
  const Jaxpr j = make_jaxpr(value_and_grad(small_mlp_loss, argnums<0, 1>))(w1, w2, x);
  if (!j.constvars.empty()) {
    state.SkipWithError("the step captured constants; the executable alone cannot run it");
    return;
  }
  const auto exe = lower::compile(j, "small_mlp_step");
  const std::vector<runtime::Buffer> in{w1.buffer(), w2.buffer(), x.buffer()};
  double call_s = 0, exe_s = 0;
  for (auto _ : state) {
    const auto a = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(step(w1, w2, x));
    const auto b = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(exe->run(in));
    const auto c = std::chrono::steady_clock::now();
    call_s += std::chrono::duration<double>(b - a).count();
    exe_s += std::chrono::duration<double>(c - b).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["call_us"] = call_s / n * 1e6;
  state.counters["exe_us"] = exe_s / n * 1e6;
  state.counters["overhead_us"] = (call_s - exe_s) / n * 1e6;
  state.counters["first_call_ms"] = first_ms;
}

void BM_chain_trace_transform(benchmark::State& state) {
  chain(state, false);
}
void BM_chain_trace_transform_compile(benchmark::State& state) {
  chain(state, true);
}

BENCHMARK(BM_floor_five_gemms)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_cjax_step)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_cjax_step_jax_residuals)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_cjax_step_checkpointed)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_paired_step_floor_twin)->Unit(benchmark::kMillisecond)->MinTime(6.0);
BENCHMARK(BM_paired_jit_call_executable)->Unit(benchmark::kMicrosecond)->MinTime(2.0);
// Square products and the chain's and a scan layer's shapes, around the crossover.
void dot_shapes(benchmark::internal::Benchmark* b) {
  for (std::vector<int64_t> s : std::vector<std::vector<int64_t>>{{4, 4, 4},
                                                                  {8, 8, 8},
                                                                  {8, 16, 8},
                                                                  {16, 16, 16},
                                                                  {8, 32, 32},
                                                                  {16, 32, 32},
                                                                  {32, 32, 32},
                                                                  {8, 64, 64},
                                                                  {32, 256, 32},
                                                                  {64, 64, 64},
                                                                  {8, 256, 256},
                                                                  {128, 128, 128},
                                                                  {256, 256, 256}})
    b->Args(s);
}
BENCHMARK(BM_dot_native)->Apply(dot_shapes);
BENCHMARK(BM_dot_blas)->Apply(dot_shapes);
// Deep programs compile as segments (compiler/cpu/segments.h): equal layers share one compiled
// function, so the time grows with depth only through tracing, differentiation and planning.
BENCHMARK(BM_chain_trace_transform)
    ->RangeMultiplier(10)
    ->Range(10, 1000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);
BENCHMARK(BM_chain_trace_transform_compile)
    ->RangeMultiplier(10)
    ->Range(10, 1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->Complexity(benchmark::oN);

}  // namespace
}  // namespace cjax

int main(int argc, char** argv) {
  // Compiles are timed here: none may come from the persistent compilation cache.
  setenv("CJAX_CACHE_DIR", "off", 1);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("openblas_core", cjax::runtime::blas_core_name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
