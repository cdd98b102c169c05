// Training models/gpt: AdamW (optax's, chained after clipping by global norm) with a warmup +
// cosine schedule, the whole step one jitted program that donates the parameters and optimizer
// state, and checkpoints of both (and the step count) as one .npz.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>

#include "cjax/api.h"
#include "cjax/optim.h"
#include "models/gpt/model.h"

namespace cjax::models::gpt {

struct TrainOptions {
  int64_t batch = 16;
  int64_t steps = 600;  // the schedule's length
  double learning_rate = 3e-3;
  int64_t warmup_steps = 50;
  double weight_decay = 0.01;
  double clip_norm = 1.0;
};

// clip_by_global_norm, then adamw on the warmup + cosine schedule. `norm_axis`: the gradients are
// blocks split over that mesh axis (FSDP), whose norm is the whole gradient's.
optim::GradientTransformation make_optimizer(const TrainOptions& options,
                                             const std::string& norm_axis = "");

struct TrainState {
  GptParams params;
  optim::OptState opt_state;
  int64_t step = 0;
};

TrainState init_train_state(const GptConfig& config, const optim::GradientTransformation& opt,
                            const Array& key);

// One training step: (params, opt_state, tokens, labels, dropout key) -> (params, opt_state, loss).
using StepFn = std::function<std::tuple<GptParams, optim::OptState, Array>(
    const GptParams&, const optim::OptState&, const Array&, const Array&, const Array&)>;

// jit(value_and_grad(gpt_loss) + the optimizer's update), donating params and opt_state.
StepFn make_train_step(const GptConfig& config, const optim::GradientTransformation& opt);

// Advances `state` by one step on (tokens, labels); returns the loss before the update.
float train_step(const StepFn& step, TrainState& state, const Array& tokens, const Array& labels,
                 const Array& dropout_key);

// The .npz of a checkpoint: "params.wte", "params.blocks.w_qkv", ..., "opt_state.count",
// "opt_state.inner[1].mu[0]", ..., and "step" (i64). Loading checks every name, shape and
// dtype against `like` (a state of the same config and optimizer) and names the first mismatch.
void save_checkpoint(const std::string& path, const TrainState& state);
TrainState load_checkpoint(const std::string& path, const TrainState& like);

}  // namespace cjax::models::gpt
