// Collectives through shard_map between MPI processes (run it with `mpirun -np N`; docs/
// distributed.md): a psum of each process's block with a replicated result, the same block
// gathered back whole (the output's all_gather), and a ring ppermute, at 64 KiB to 4 MiB of f32
// per process. `sent_per_s` is what one process sends (the ring algorithms' counts, as
// `cjax comms` reports them) over the time of a call. BM_gpt_step: a training step of models/gpt
// (the default model, batch 16) on every process: the single-process step (the peer), data
// parallel, FSDP, and FSDP saving its gathered weights, with each process's peak bytes. Every
// process runs every benchmark; only process 0 reports.
#include <benchmark/benchmark.h>

#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"
#include "models/gpt/sharded.h"
#include "models/gpt/text.h"
#include "runtime/buffer.h"

namespace cjax::bench {
namespace {

namespace jnp = cjax::numpy;

using Program = std::function<Array(const Array&)>;

void run(benchmark::State& state, const std::function<Program(const Mesh&, int64_t)>& make,
         double sent_blocks) {
  const int64_t n = distributed::process_count();
  const int64_t block = state.range(0) / 4;  // f32 elements per process
  const Mesh mesh({n}, {"x"});
  const Program f = make(mesh, n);
  const Array x = jnp::ones({n * block}).astype(DType::f32);
  f(x).buffer();  // compiled once
  for (auto _ : state) benchmark::DoNotOptimize(f(x).buffer().data());
  state.counters["processes"] = double(n);
  state.counters["sent_per_s"] = benchmark::Counter(sent_blocks * double(state.range(0)),
                                                    benchmark::Counter::kIsIterationInvariantRate,
                                                    benchmark::Counter::kIs1024);
}

void BM_psum(benchmark::State& state) {
  const double n = double(distributed::process_count());
  run(
      state,
      [](const Mesh& mesh, int64_t) -> Program {
        return jit(
            shard_map([](const Array& a) { return lax::psum(a, "x"); }, mesh, {P("x")}, {P()}));
      },
      2 * (n - 1) / n);
}

void BM_gather_output(benchmark::State& state) {
  run(
      state,
      [](const Mesh& mesh, int64_t) -> Program {
        return jit(shard_map([](const Array& a) { return a * 2.0f; }, mesh, {P("x")}, {P("x")}));
      },
      double(distributed::process_count() - 1));
}

void BM_ppermute_ring(benchmark::State& state) {
  run(
      state,
      [](const Mesh& mesh, int64_t n) -> Program {
        std::vector<std::pair<int64_t, int64_t>> ring;
        for (int64_t i = 0; i < n; ++i) ring.emplace_back(i, (i + 1) % n);
        return jit(shard_map(
            [ring](const Array& a) { return lax::psum(lax::ppermute(a, "x", ring), "x"); }, mesh,
            {P("x")}, {P()}));
      },
      1.0 + 2.0 * double(distributed::process_count() - 1) / double(distributed::process_count()));
}

// A fixed count of calls: each process must make the same calls, which Google Benchmark's own
// choice of iterations (from each process's timing) would not guarantee.
#define CJAX_BYTES               \
  ->RangeMultiplier(8)           \
      ->Range(64 << 10, 4 << 20) \
      ->Iterations(40)           \
      ->UseRealTime()            \
      ->Unit(benchmark::kMillisecond)
BENCHMARK(BM_psum) CJAX_BYTES;
BENCHMARK(BM_gather_output) CJAX_BYTES;
BENCHMARK(BM_ppermute_ring) CJAX_BYTES;

namespace gpt = cjax::models::gpt;

// range(0): 0 the single-process step (every process runs its own), 1 data parallel, 2 FSDP,
// 3 FSDP saving the gathered weights.
void BM_gpt_step(benchmark::State& state) {
  const int mode = int(state.range(0));
  gpt::GptConfig config;
  config.save_gathered = mode == 3;
  gpt::TrainOptions options;
  const std::vector<int32_t> ids = gpt::encode(gpt::generate_text(100'000, 2026));
  gpt::SplitMix64 rng(1);
  auto [x, y] = gpt::sample_batch(ids, options.batch, config.seq, rng);
  const Array key = random::PRNGKey(0);
  std::function<float()> step;
  std::optional<gpt::ShardedTraining> sharded;
  gpt::TrainState st;
  Array rows_x, rows_y;
  gpt::StepFn single;
  if (mode == 0) {
    const auto opt = gpt::make_optimizer(options);
    st = gpt::init_train_state(config, opt, key);
    single = gpt::make_train_step(config, opt);
    step = [&] { return gpt::train_step(single, st, x, y, key); };
  } else {
    sharded = gpt::make_sharded_training(
        config, options, mode == 1 ? gpt::Parallelism::data : gpt::Parallelism::fsdp);
    st = sharded->shard(gpt::init_train_state(sharded->config, sharded->opt, key));
    rows_x = distributed::block_of(x, sharded->mesh, P("x"));
    rows_y = distributed::block_of(y, sharded->mesh, P("x"));
    step = [&] { return sharded->step(st, rows_x, rows_y, key); };
  }
  step();  // compiled once
  runtime::reset_peak_bytes();
  for (auto _ : state) benchmark::DoNotOptimize(step());
  state.counters["processes"] = double(distributed::process_count());
  state.counters["peak_MiB"] = double(runtime::memory_stats().peak_bytes) / (1 << 20);
  state.SetLabel(mode == 0   ? "single process"
                 : mode == 1 ? "data parallel"
                 : mode == 2 ? "FSDP"
                             : "FSDP, gathered weights saved");
}
BENCHMARK(BM_gpt_step)
    ->DenseRange(0, 3)
    ->Iterations(20)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Google Benchmark prints from every process unless told otherwise: process 0 reports.
class Quiet : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace
}  // namespace cjax::bench

int main(int argc, char** argv) {
  cjax::install_cpu_backend();
  cjax::distributed::initialize();
  benchmark::Initialize(&argc, argv);
  if (cjax::distributed::process_index() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    cjax::bench::Quiet quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
}
