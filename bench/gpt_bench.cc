// models/gpt's training step (jit of value_and_grad + AdamW, params and optimizer state donated)
// at two sizes, without checkpointing and with the block checkpointed under two policies: the
// step time and the peak bytes live during a step (weights, optimizer state and batch included),
// exact: every buffer, compiled code's included, comes from runtime/allocator.h, which counts
// them. bench/gpt_side_by_side.sh runs it beside PyTorch eager.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <string>

#include "cjax/cjax.h"
#include "models/gpt/model.h"
#include "models/gpt/text.h"
#include "models/gpt/train.h"
#include "runtime/buffer.h"

namespace {

namespace gpt = cjax::models::gpt;
using cjax::Array;

struct Size {
  const char* name;
  int64_t vocab, d_model, heads, seq, batch, layers;
};
// As bench/torch_gpt.py: gpt_train's default model, and the issue's.
constexpr std::array kSizes = {Size{"small", 96, 128, 4, 64, 16, 4},
                               Size{"issue", 96, 256, 4, 128, 16, 4}};
constexpr std::array kPolicies = {"none", "dots_with_no_batch_dims_saveable", "nothing_saveable"};

void BM_gpt_step(benchmark::State& state) {
  const Size& z = kSizes[size_t(state.range(0))];
  gpt::GptConfig c;
  c.vocab = z.vocab;
  c.d_model = z.d_model;
  c.heads = z.heads;
  c.seq = z.seq;
  c.layers = z.layers;
  c.policy = kPolicies[size_t(state.range(1))];
  gpt::TrainOptions o;
  o.batch = z.batch;
  const auto opt = gpt::make_optimizer(o);
  gpt::TrainState s = gpt::init_train_state(c, opt, cjax::random::PRNGKey(0));
  const std::vector<int32_t> ids = gpt::encode(gpt::generate_text(100'000, 1));
  gpt::SplitMix64 rng(1);
  auto [x, y] = gpt::sample_batch(ids, z.batch, z.seq, rng);
  const gpt::StepFn step = gpt::make_train_step(c, opt);
  const Array key = cjax::random::PRNGKey(1);
  for (int i = 0; i < 2; ++i) gpt::train_step(step, s, x, y, key);  // compiles, then warms
  size_t peak = 0;
  for (auto _ : state) {
    cjax::runtime::reset_peak_bytes();
    benchmark::DoNotOptimize(gpt::train_step(step, s, x, y, key));
    peak = std::max(peak, cjax::runtime::memory_stats().peak_bytes);
  }
  state.SetLabel(fmt::format("{} {}", z.name, c.policy));
  state.counters["peak_MiB"] = double(peak) / (1 << 20);
  state.counters["tokens_per_s"] =
      benchmark::Counter(double(z.batch * z.seq), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_gpt_step)
    ->ArgsProduct({{0, 1}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
