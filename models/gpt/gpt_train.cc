// gpt_train: trains models/gpt on generated prose and reports what it learned.
//
//   build/examples/gpt_train                       # the default run: a few minutes on 2 cores
//   build/examples/gpt_train --steps 200 --policy nothing_saveable --save ckpt.npz
//   build/examples/gpt_train --load ckpt.npz --steps 400   # resumes at step 200
//   mpirun -np 4 build/examples/gpt_train --parallel fsdp   # each process holds 1/4 of the model
//
// Exit codes: 0 done (and, with --target-loss, reached it), 1 bad input (a checkpoint that does
// not fit, an unwritable path) or the target missed, 2 bad options, 3 an internal error.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

#include "cjax/cjax.h"
#include "io/files.h"
#include "ir/byte_size.h"
#include "models/gpt/curve_svg.h"
#include "models/gpt/model.h"
#include "models/gpt/sharded.h"
#include "models/gpt/text.h"
#include "models/gpt/train.h"
#include "passes/comms.h"
#include "runtime/buffer.h"

namespace gpt = cjax::models::gpt;
using cjax::Array;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  gpt::GptConfig config;
  gpt::TrainOptions train;
  uint64_t seed = 0;
  size_t text_chars = 1'000'000;
  int64_t eval_every = 100;
  int64_t eval_batches = 8;
  bool interpret = false;
  bool residuals = false;
  std::string parallel;  // "", "data" or "fsdp" (models/gpt/sharded.h)
  bool comms = false;
  std::string save, load, plot, csv;
  int64_t sample_chars = 200;
  std::optional<double> target_loss;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One line, redrawn in place on a terminal, printed every `every` steps otherwise.
class ProgressBar {
 public:
  ProgressBar(int64_t first, int64_t last, bool quiet)
      : first_(first), last_(last), tty_(isatty(2) != 0), quiet_(quiet) {}
  void update(int64_t step, double loss, double tokens_per_s, double elapsed) {
    const int64_t done = step - first_, total = std::max<int64_t>(1, last_ - first_);
    if (quiet_ || (!tty_ && step != last_ && step % 50 != 0)) return;
    const int width = 24, filled = int(width * done / total);
    const double eta = done > 0 ? elapsed * double(total - done) / double(done) : 0.0;
    std::string bar = std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.');
    fmt::print(stderr, "{}step {:>5}/{} [{}] loss {:.3f}  {:>6.0f} tok/s  eta {:>4.0f}s{}",
               tty_ ? "\r" : "", step, last_, bar, loss, tokens_per_s, eta, tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (tty_ && !quiet_) fmt::print(stderr, "\n");
  }

 private:
  int64_t first_, last_;
  bool tty_, quiet_;
};

// Text from the model: the prompt's last `seq` tokens in, the most likely next char out,
// repeated (a fixed-shape window, so one compiled program serves every position).
std::string sample_text(const gpt::GptConfig& c, const gpt::GptParams& params,
                        std::vector<int32_t> context, int64_t chars) {
  auto next_logits = cjax::jit([c](const gpt::GptParams& p, const Array& window) {
    Array logits = gpt::gpt_logits(c, p, window, cjax::random::PRNGKey(0), false);
    return cjax::numpy::argmax(logits[{0, c.seq - 1}]);
  });
  std::vector<int32_t> out;
  for (int64_t i = 0; i < chars; ++i) {
    std::vector<int32_t> window(context.end() - c.seq, context.end());
    const auto id = next_logits(params, cjax::array(window, cjax::Shape{1, c.seq})).item<int32_t>();
    context.push_back(id);
    out.push_back(id);
  }
  return gpt::decode(out);
}

// What the gradient of one step keeps for its backward pass under the config's policy, as
// jax.ad_checkpoint.print_saved_residuals prints it.
// Under --parallel: what one process's gradient keeps, on its blocks of the weights and its rows
// of the batch.
int print_residuals(const Options& o) {
  gpt::GptConfig c = o.config;
  c.check();
  gpt::GptParams params = gpt::init_gpt(c, cjax::random::PRNGKey(0));
  int64_t rows = o.train.batch;
  std::optional<gpt::ShardedTraining> sharded;
  std::optional<cjax::AxisEnvScope> axis;  // the mesh's axis, bound while the loss is traced
  if (!o.parallel.empty()) {
    sharded = gpt::make_sharded_training(c, o.train, gpt::parallelism_by_name(o.parallel));
    if (cjax::distributed::process_index() != 0) return 0;
    c = sharded->config;
    params =
        sharded->shard(gpt::init_train_state(c, sharded->opt, cjax::random::PRNGKey(0))).params;
    rows /= sharded->mesh.size();
    axis.emplace(sharded->axis, sharded->mesh.size());
  }
  const Array tokens = cjax::numpy::zeros({rows, c.seq}, cjax::DType::i32);
  cjax::print_saved_residuals(gpt::training_loss(c), {"params", "tokens", "labels", "key"})(
      params, tokens, tokens, cjax::random::PRNGKey(0));
  return 0;
}

// What each process sends per step (`cjax comms` on the step's program), from process 0.
int print_comms(const Options& o) {
  if (o.parallel.empty()) throw cjax::UsageError("gpt_train: --comms needs --parallel");
  const auto t =
      gpt::make_sharded_training(o.config, o.train, gpt::parallelism_by_name(o.parallel));
  if (cjax::distributed::process_index() != 0) return 0;
  const gpt::TrainState whole = gpt::init_train_state(t.config, t.opt, cjax::random::PRNGKey(0));
  // on_blocks leaves the step's outputs (the state's parts) where they are: nothing gathered.
  const cjax::CommsReport report = cjax::comms_report(t.step_jaxpr(whole, o.train.batch), false);
  fmt::print("{}", cjax::format_comms(report));
  for (const auto& [kind, bytes] : report.bytes_by_collective())
    fmt::print("  {}: {} per step\n", kind, cjax::format_byte_size(size_t(bytes)));
  return 0;
}

int train(const Options& o) {
  const gpt::GptConfig& c = o.config;
  c.check();
  const std::vector<int32_t> ids = gpt::encode(gpt::generate_text(o.text_chars, 2026));
  const size_t split = ids.size() * 9 / 10;
  const std::span<const int32_t> train_ids(ids.data(), split),
      val_ids(ids.data() + split, ids.size() - split);
  // Under --parallel every process makes the whole state from the same key, keeps its part of
  // it, and puts the whole together only where it is read (validation, saving, sampling).
  std::optional<gpt::ShardedTraining> sharded;
  if (!o.parallel.empty())
    sharded = gpt::make_sharded_training(c, o.train, gpt::parallelism_by_name(o.parallel));
  const bool quiet = sharded && cjax::distributed::process_index() != 0;
  if (quiet && !std::freopen("/dev/null", "w", stdout))
    throw cjax::Error("gpt_train: cannot silence the output of the other processes");
  const auto opt = sharded ? sharded->opt : gpt::make_optimizer(o.train);
  const Array key = cjax::random::PRNGKey(int64_t(o.seed));
  gpt::TrainState state = gpt::init_train_state(c, opt, cjax::random::fold_in(key, 0));
  if (!o.load.empty()) state = gpt::load_checkpoint(o.load, state);
  const int64_t total_weights = gpt::parameter_count(state.params);
  if (sharded) state = sharded->shard(state);
  auto whole_params = [&] { return sharded ? sharded->gather(state).params : state.params; };
  fmt::print(
      "gpt: {} weights (vocab {}, d_model {}, {} heads, {} layers, seq {}), batch {}, "
      "policy {}, dropout {}, {} back end; text {} chars\n",
      total_weights, c.vocab, c.d_model, c.heads, c.layers, c.seq, o.train.batch, c.policy,
      c.dropout, o.interpret ? "interpreter" : "compiled", ids.size());
  if (state.step > 0) fmt::print("gpt: resumed from {} at step {}\n", o.load, state.step);
  if (sharded)
    fmt::print("gpt: {} on {} processes: each holds {} weights and rows {} of the batch\n",
               o.parallel == "fsdp" ? "FSDP" : "data parallel", sharded->mesh.size(),
               gpt::parameter_count(state.params), o.train.batch / sharded->mesh.size());

  std::optional<cjax::UseInterpreter> interpreter;
  if (o.interpret) interpreter.emplace();
  const gpt::StepFn step = gpt::make_train_step(c, opt);
  auto eval_loss = cjax::jit([c](const gpt::GptParams& p, const Array& x, const Array& y) {
    return gpt::gpt_loss(c, p, x, y, cjax::random::PRNGKey(0), /*training=*/false);
  });
  auto validation_loss = [&] {
    gpt::SplitMix64 rng(o.seed + 7);  // the same validation windows every time
    double sum = 0;
    const gpt::GptParams params = whole_params();
    for (int64_t i = 0; i < o.eval_batches; ++i) {
      auto [x, y] = gpt::sample_batch(val_ids, o.train.batch, c.seq, rng);
      sum += eval_loss(params, x, y).item<double>();
    }
    return sum / double(o.eval_batches);
  };

  gpt::TrainingCurve curve;
  curve.title =
      fmt::format("models/gpt: d_model {}, {} layers, policy {}", c.d_model, c.layers, c.policy);
  curve.reference_lines = {{std::log(double(c.vocab)), fmt::format("ln {}", c.vocab)},
                           {1.5, "1.5 nats/char"}};
  const int64_t first = state.step, tokens_per_step = o.train.batch * c.seq;
  ProgressBar bar(first, o.train.steps, quiet);
  const auto start = Clock::now();
  std::optional<Clock::time_point> after_first;  // the first step includes compiling
  std::vector<double> recent;
  size_t step_peak = 0;  // the most bytes live during a step, weights and optimizer state included
  while (state.step < o.train.steps) {
    // Windows and dropout keys from the step number, so a resumed run continues the same run.
    gpt::SplitMix64 rng(o.seed * 0x100000001b3ull + uint64_t(state.step));
    auto [x, y] = gpt::sample_batch(train_ids, o.train.batch, c.seq, rng);
    const Array dropout_key = cjax::random::fold_in(key, state.step + 1);
    cjax::runtime::reset_peak_bytes();
    const float loss =
        sharded ? sharded->step(state, cjax::distributed::block_of(x, sharded->mesh, cjax::P("x")),
                                cjax::distributed::block_of(y, sharded->mesh, cjax::P("x")),
                                dropout_key)
                : gpt::train_step(step, state, x, y, dropout_key);
    step_peak = std::max(step_peak, cjax::runtime::memory_stats().peak_bytes);
    if (!std::isfinite(loss))
      throw cjax::Error(fmt::format("gpt: loss {} at step {}", loss, state.step));
    if (!after_first) after_first = Clock::now();
    curve.train.push_back({state.step, loss});
    recent.push_back(loss);
    if (recent.size() > 20) recent.erase(recent.begin());
    const int64_t timed = state.step - first - 1;
    const double rate =
        timed > 0 ? double(timed * tokens_per_step) / seconds_since(*after_first) : 0;
    bar.update(state.step,
               std::accumulate(recent.begin(), recent.end(), 0.0) / double(recent.size()), rate,
               seconds_since(start));
    if (state.step % o.eval_every == 0 || state.step == o.train.steps)
      curve.validation.push_back({state.step, validation_loss()});
  }
  bar.finish();
  const double elapsed = seconds_since(start);
  const int64_t trained = state.step - first;
  const double val = curve.validation.empty() ? validation_loss() : curve.validation.back().loss;
  const double train_avg =
      recent.empty() ? NAN
                     : std::accumulate(recent.begin(), recent.end(), 0.0) / double(recent.size());
  std::string peak = fmt::format("{:.1f} MiB", double(step_peak) / (1 << 20));
  if (sharded) {  // every process's, as process 0 reports them
    const Array peaks = cjax::distributed::gather_blocks(
        cjax::array(std::vector<double>{double(step_peak) / (1 << 20)}, cjax::Shape{1}),
        sharded->mesh, cjax::P("x"));
    peak = "per process";
    for (double mib : peaks.to_vector<double>()) peak += fmt::format(" {:.1f}", mib);
    peak += " MiB";
  }
  fmt::print(
      "gpt: {} steps in {:.1f} s ({:.0f} tokens/s after the first step); training loss "
      "{:.3f} (mean of the last {}), validation loss {:.3f} nats/char; a step's peak memory "
      "{}\n",
      trained, elapsed,
      trained > 1 ? double((trained - 1) * tokens_per_step) / seconds_since(*after_first) : 0.0,
      train_avg, recent.size(), val, peak);
  if (sharded && !o.save.empty()) {
    const gpt::TrainState whole = sharded->gather(state);
    if (!quiet) gpt::save_checkpoint(o.save, whole);
    fmt::print("gpt: saved the parameters and optimizer state at step {} to {}\n", state.step,
               o.save);
  } else if (!o.save.empty()) {
    gpt::save_checkpoint(o.save, state);
    fmt::print("gpt: saved the parameters and optimizer state at step {} to {}\n", state.step,
               o.save);
  }
  if (!o.plot.empty() && !quiet) {
    cjax::io::write_file_bytes(o.plot, gpt::curve_svg(curve));
    fmt::print("gpt: wrote the training curve to {}\n", o.plot);
  }
  if (!o.csv.empty() && !quiet) cjax::io::write_file_bytes(o.csv, gpt::curve_csv(curve));
  if (o.sample_chars > 0) {
    std::vector<int32_t> prompt(val_ids.begin(), val_ids.begin() + c.seq);
    fmt::print("gpt: after \"{}\" it writes:\n{}\n", gpt::decode(std::span(prompt).last(40)),
               sample_text(c, whole_params(), prompt, o.sample_chars));
  }
  if (o.target_loss && !(val < *o.target_loss)) {
    fmt::print(stderr, "gpt: validation loss {:.3f} did not reach the target {}\n", val,
               *o.target_loss);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Train models/gpt, a character-level GPT, on generated prose."};
  app.add_option("--steps", o.train.steps, "training steps (the schedule's length)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--policy", o.config.policy,
                 "the block's checkpoint policy (a jax.checkpoint_policies name, or none)")
      ->capture_default_str();
  app.add_option("--batch", o.train.batch)->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--d-model", o.config.d_model)->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--heads", o.config.heads)->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--layers", o.config.layers)->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--seq", o.config.seq)->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--dropout", o.config.dropout)
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--lr", o.train.learning_rate, "peak learning rate")->capture_default_str();
  app.add_option("--warmup", o.train.warmup_steps)->capture_default_str();
  app.add_option("--seed", o.seed)->capture_default_str();
  app.add_option("--eval-every", o.eval_every, "steps between validation losses")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--interpret", o.interpret, "run every step on the interpreter, not compiled");
  app.add_flag("--residuals", o.residuals,
               "print what one step's gradient saves for its backward pass (with --parallel: "
               "one process's), and exit");
  app.add_option("--parallel", o.parallel,
                 "train on the processes mpirun starts: data (weights replicated, gradients "
                 "averaged) or fsdp (weights and optimizer state split over the processes)")
      ->check(CLI::IsMember({"data", "fsdp"}));
  app.add_flag("--save-gathered", o.config.save_gathered,
               "with --parallel fsdp: the checkpointed block saves its gathered weights for the "
               "backward pass instead of gathering them again");
  app.add_flag("--comms", o.comms,
               "with --parallel: print the bytes each process sends per step, and exit");
  app.add_option("--save", o.save, "write the parameters and optimizer state (.npz) at the end");
  app.add_option("--load", o.load, "resume from a checkpoint written by --save");
  app.add_option("--plot", o.plot, "write the training curve as SVG");
  app.add_option("--csv", o.csv, "write the losses as CSV");
  app.add_option("--sample", o.sample_chars, "characters of text to generate at the end")
      ->capture_default_str();
  app.add_option("--target-loss", o.target_loss, "exit 1 unless the validation loss ends below");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return o.residuals ? print_residuals(o) : o.comms ? print_comms(o) : train(o);
  } catch (const cjax::UsageError& e) {
    fmt::print(stderr, "gpt_train: {}\n", e.what());
    return 2;
  } catch (const cjax::Error& e) {
    fmt::print(stderr, "gpt_train: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpt_train: internal error: {}\n", e.what());
    return 3;
  }
}
