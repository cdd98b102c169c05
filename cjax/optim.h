// cjax::optim: optax's optimizers over any pytree, in optax's shape: a GradientTransformation
// has init(params) -> state and update(grads, state, params) -> (updates, state), and
// apply_updates(params, updates) moves the parameters. The state is a pytree (OptState), so a
// whole training step jits, with the parameters and the state donated:
//
//   auto opt = optim::chain({optim::clip_by_global_norm(1.0),
//                            optim::adamw(optim::warmup_cosine_decay_schedule(0, 3e-4, 100,
//                            2000))});
//   optim::OptState state = opt.init(params);
//   auto step = jit([&](const Params& p, const optim::OptState& s, const Array& batch) {
//     auto [loss, grads] = value_and_grad(loss_fn)(p, batch);
//     auto [updates, next] = opt.update(grads, s, p);
//     return std::tuple{optim::apply_updates(p, updates), next, loss};
//   }, donate_argnums(0, 1));
//
// The arithmetic is optax's (scale_by_adam, add_decayed_weights, trace, clip_by_global_norm, the
// schedules), in the parameters' dtype; docs/models.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "cjax/pytree.h"

namespace cjax::optim {

// A schedule: the learning rate (an f32 scalar) at a step count (an i32 scalar).
using Schedule = std::function<Array(const Array& count)>;

// A learning rate: a number, or a schedule of the step count.
class LearningRate {
 public:
  LearningRate(double value);  // NOLINT: a number is a constant rate
  LearningRate(Schedule schedule) : schedule_(std::move(schedule)) {}  // NOLINT
  Array at(const Array& count) const;

 private:
  double value_ = 0;
  Schedule schedule_;
};

// What a transformation keeps between steps: the step count, per-leaf first and second
// moments (as the transformation uses them), and the states of a chain's members.
struct OptState {
  Array count;
  std::vector<Array> mu, nu;
  std::vector<OptState> inner;
};
CJAX_PYTREE(OptState, count, mu, nu, inner)

class GradientTransformation {
 public:
  using Leaves = std::vector<Array>;
  using InitFn = std::function<OptState(const Leaves& params)>;
  // The updates from the gradients (leaves in flatten order); advances `state`.
  using UpdateFn =
      std::function<Leaves(const Leaves& grads, OptState& state, const Leaves& params)>;

  GradientTransformation(InitFn init, UpdateFn update)
      : init_(std::move(init)), update_(std::move(update)) {}

  template <class T>
  OptState init(const T& params) const {
    return init_(tree_leaves(params));
  }
  // The updates (grads' structure, to add to the params) and the next state.
  template <class T>
  std::pair<T, OptState> update(const T& grads, const OptState& state, const T& params) const {
    OptState next = state;
    const Leaves updates = update_(tree_leaves(grads), next, tree_leaves(params));
    return {tree_unflatten(grads, updates), std::move(next)};
  }

  const InitFn& init_fn() const { return init_; }
  const UpdateFn& update_fn() const { return update_; }

 private:
  InitFn init_;
  UpdateFn update_;
};

// optax.sgd: -lr * g, or with momentum the trace g + momentum * trace (Nesterov: g + momentum *
// new trace).
GradientTransformation sgd(LearningRate learning_rate,
                           std::optional<double> momentum = std::nullopt, bool nesterov = false);
// optax.adam and optax.adamw (weight decay added to the Adam direction before the rate).
GradientTransformation adam(LearningRate learning_rate, double b1 = 0.9, double b2 = 0.999,
                            double eps = 1e-8);
GradientTransformation adamw(LearningRate learning_rate, double b1 = 0.9, double b2 = 0.999,
                             double eps = 1e-8, double weight_decay = 1e-4);
// optax.clip_by_global_norm: the gradients scaled down to a global norm of at most max_norm.
// With `axis_name` (inside shard_map), every leaf is one process's block of a gradient split over
// that mesh axis, and the norm is the whole gradient's: the sum of squares psum-ed over the axis.
GradientTransformation clip_by_global_norm(double max_norm, std::string axis_name = "");
// optax.chain: each transformation applied to the previous one's updates.
GradientTransformation chain(std::vector<GradientTransformation> transformations);

// optax.global_norm: the square root of the sum of every leaf's squares (with `axis_name`, that
// sum psum-ed over the mesh axis first, as clip_by_global_norm's).
Array global_norm(const std::vector<Array>& leaves, const std::string& axis_name = "");

// optax.apply_updates: params + updates, in each parameter's dtype.
Array apply_update(const Array& param, const Array& update);
template <class T>
T apply_updates(const T& params, const T& updates) {
  return tree_map([](const Array& p, const Array& u) { return apply_update(p, u); }, params,
                  updates);
}

// optax's schedules.
Schedule constant_schedule(double value);
Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps);
Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha = 0.0,
                               double exponent = 1.0);
// Linear from init_value to peak_value over warmup_steps, then a cosine to end_value at
// decay_steps (counted from the start, as optax).
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value = 0.0,
                                      double exponent = 1.0);

}  // namespace cjax::optim
