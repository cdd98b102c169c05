#include "cjax/optim.h"

#include <cmath>
#include <numbers>

#include "cjax/collectives.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "ir/errors.h"

namespace cjax::optim {
namespace {

namespace jnp = cjax::numpy;
using Leaves = GradientTransformation::Leaves;

Array zero_count() {
  return Array::scalar(0, DType::i32);
}

Array zeros_like_leaf(const Array& x) {
  return jnp::zeros_like(x);
}

// numerics.safe_int32_increment: the count stops at int32's largest value.
Array increment(const Array& count) {
  const Array top = Array::scalar(2147483647, DType::i32);
  const Array one = Array::scalar(1, DType::i32);
  return jnp::where(jnp::less(count, top), jnp::add(count, one), top);
}

// x scaled by a scalar, in x's dtype.
Array scaled(const Array& x, const Array& s) {
  return jnp::multiply(x, s.astype(x.dtype()));
}

// scale_by_learning_rate: the updates times -lr(count).
Leaves scale_by_rate(const Leaves& updates, const LearningRate& lr, const Array& count) {
  const Array rate = jnp::negative(lr.at(count));
  Leaves out;
  for (const Array& u : updates) out.push_back(scaled(u, rate));
  return out;
}

void expect_leaves(const Leaves& a, const Leaves& b, const char* what) {
  if (a.size() != b.size())
    throw Error(
        fmt::format("optim: {} has {} leaves, the optimizer's state {}", what, a.size(), b.size()));
}

// scale_by_adam's direction, with the state advanced.
Leaves adam_direction(const Leaves& grads, OptState& state, double b1, double b2, double eps) {
  expect_leaves(grads, state.mu, "the gradient");
  const Array count = increment(state.count);
  const Array steps = count.astype(DType::f32);
  const Array correction1 = jnp::subtract(1.0, jnp::power(Array(b1), steps));
  const Array correction2 = jnp::subtract(1.0, jnp::power(Array(b2), steps));
  Leaves out;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Array& g = grads[i];
    const Array mu = jnp::add(jnp::multiply(1.0 - b1, g), jnp::multiply(b1, state.mu[i]));
    const Array nu =
        jnp::add(jnp::multiply(1.0 - b2, jnp::square(g)), jnp::multiply(b2, state.nu[i]));
    state.mu[i] = mu;
    state.nu[i] = nu;
    const Array mu_hat = jnp::divide(mu, correction1.astype(mu.dtype()));
    const Array nu_hat = jnp::divide(nu, correction2.astype(nu.dtype()));
    out.push_back(jnp::divide(mu_hat, jnp::add(jnp::sqrt(nu_hat), eps)));
  }
  state.count = count;
  return out;
}

GradientTransformation adam_like(LearningRate lr, double b1, double b2, double eps,
                                 double weight_decay) {
  auto init = [](const Leaves& params) {
    OptState s;
    s.count = zero_count();
    for (const Array& p : params) {
      s.mu.push_back(zeros_like_leaf(p));
      s.nu.push_back(zeros_like_leaf(p));
    }
    return s;
  };
  auto update = [=](const Leaves& grads, OptState& state, const Leaves& params) {
    const Array count = state.count;  // the schedule's step: before this one
    Leaves u = adam_direction(grads, state, b1, b2, eps);
    if (weight_decay != 0.0) {
      expect_leaves(params, u, "the parameters");
      for (size_t i = 0; i < u.size(); ++i)
        u[i] = jnp::add(u[i], jnp::multiply(weight_decay, params[i]));
    }
    return scale_by_rate(u, lr, count);
  };
  return GradientTransformation(init, update);
}

}  // namespace

Array LearningRate::at(const Array& count) const {
  if (schedule_) return schedule_(count);
  return Array::scalar(value_, DType::f32);
}

LearningRate::LearningRate(double value) : value_(value) {}

GradientTransformation sgd(LearningRate lr, std::optional<double> momentum, bool nesterov) {
  auto init = [momentum](const Leaves& params) {
    OptState s;
    s.count = zero_count();
    if (momentum)
      for (const Array& p : params) s.mu.push_back(zeros_like_leaf(p));
    return s;
  };
  auto update = [=](const Leaves& grads, OptState& state, const Leaves&) {
    const Array count = state.count;
    Leaves u = grads;
    if (momentum) {
      expect_leaves(grads, state.mu, "the gradient");
      for (size_t i = 0; i < grads.size(); ++i) {
        const Array trace = jnp::add(grads[i], jnp::multiply(*momentum, state.mu[i]));
        state.mu[i] = trace;
        u[i] = nesterov ? jnp::add(grads[i], jnp::multiply(*momentum, trace)) : trace;
      }
    }
    state.count = increment(count);
    return scale_by_rate(u, lr, count);
  };
  return GradientTransformation(init, update);
}

GradientTransformation adam(LearningRate lr, double b1, double b2, double eps) {
  return adam_like(std::move(lr), b1, b2, eps, 0.0);
}

GradientTransformation adamw(LearningRate lr, double b1, double b2, double eps,
                             double weight_decay) {
  return adam_like(std::move(lr), b1, b2, eps, weight_decay);
}

Array global_norm(const std::vector<Array>& leaves, const std::string& axis_name) {
  Array total = Array::scalar(0, DType::f32);
  for (const Array& x : leaves) total = jnp::add(total, jnp::sum(jnp::square(x)));
  if (!axis_name.empty()) total = lax::psum(total, axis_name);
  return jnp::sqrt(total);
}

GradientTransformation clip_by_global_norm(double max_norm, std::string axis_name) {
  auto init = [](const Leaves&) {
    OptState s;
    s.count = zero_count();
    return s;
  };
  auto update = [max_norm, axis_name](const Leaves& grads, OptState&, const Leaves&) {
    const Array norm = global_norm(grads, axis_name);
    const Array keep = jnp::less(norm, max_norm);
    Leaves out;
    for (const Array& g : grads) {
      const Array clipped = jnp::multiply(jnp::divide(g, norm.astype(g.dtype())), max_norm);
      out.push_back(jnp::where(keep, g, clipped));
    }
    return out;
  };
  return GradientTransformation(init, update);
}

GradientTransformation chain(std::vector<GradientTransformation> ts) {
  auto init = [ts](const Leaves& params) {
    OptState s;
    s.count = zero_count();
    for (const GradientTransformation& t : ts) s.inner.push_back(t.init_fn()(params));
    return s;
  };
  auto update = [ts](const Leaves& grads, OptState& state, const Leaves& params) {
    if (state.inner.size() != ts.size())
      throw Error(
          fmt::format("optim: a chain of {} holds {} states", ts.size(), state.inner.size()));
    Leaves u = grads;
    for (size_t k = 0; k < ts.size(); ++k) u = ts[k].update_fn()(u, state.inner[k], params);
    state.count = increment(state.count);
    return u;
  };
  return GradientTransformation(init, update);
}

Array apply_update(const Array& param, const Array& update) {
  return jnp::add(param, update).astype(param.dtype());
}

Schedule constant_schedule(double value) {
  return [value](const Array&) { return Array::scalar(value, DType::f32); };
}

Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps) {
  if (transition_steps <= 0) return constant_schedule(init_value);
  return [=](const Array& count) {
    const Array frac =
        jnp::clip(jnp::divide(count.astype(DType::f32), static_cast<double>(transition_steps)),
                  Array(0.0), Array(1.0));
    return jnp::add(init_value, jnp::multiply(end_value - init_value, frac)).astype(DType::f32);
  };
}

Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha,
                               double exponent) {
  if (decay_steps <= 0) throw Error("optim: cosine_decay_schedule needs decay_steps > 0");
  return [=](const Array& count) {
    const Array steps = jnp::minimum(count, Array::scalar(decay_steps, DType::i32));
    const Array phase = jnp::divide(jnp::multiply(std::numbers::pi, steps.astype(DType::f32)),
                                    static_cast<double>(decay_steps));
    const Array cosine = jnp::multiply(0.5, jnp::add(1.0, jnp::cos(phase)));
    const Array decayed = jnp::add(jnp::multiply(1.0 - alpha, jnp::power(cosine, exponent)), alpha);
    return jnp::multiply(init_value, decayed).astype(DType::f32);
  };
}

Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value, double exponent) {
  const double alpha = peak_value == 0.0 ? 0.0 : end_value / peak_value;
  const Schedule warmup = linear_schedule(init_value, peak_value, warmup_steps);
  const Schedule decay = cosine_decay_schedule(
      peak_value, std::max<int64_t>(decay_steps - warmup_steps, 1), alpha, exponent);
  // optax.join_schedules: the second schedule counts from the boundary.
  return [=](const Array& count) {
    const Array boundary = Array::scalar(warmup_steps, DType::i32);
    const Array after = jnp::subtract(count, boundary);
    return jnp::where(jnp::less(count, boundary), warmup(count), decay(after));
  };
}

}  // namespace cjax::optim
