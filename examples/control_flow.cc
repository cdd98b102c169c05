// Control-flow examples: the tutorial's scan over layers (plain, checkpointed body, deeper), a
// cond, a long Euler scan (plain and binomial-scheduled), a bounded while loop and a fori_loop.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "cjax/api.h"
#include "examples/inputs.h"
#include "examples/registry.h"
#include "passes/policies.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;

using WB = std::pair<Array, Array>;
using LayerOut = std::pair<Array, std::tuple<>>;

// The tutorial's layer: relu(x @ W + b); the scan carries x and returns nothing per layer.
LayerOut layer(const Array& x, const WB& wb) {
  return {np::maximum(np::dot(x, wb.first) + wb.second, 0.0), {}};
}

Array net(const Array& all_weights, const Array& all_biases, const Array& x) {
  return scan(layer, x, WB{all_weights, all_biases}).first;
}

// The same scan over jax.checkpoint(layer, policy=dots_with_no_batch_dims_saveable).
Array net_checkpoint(const Array& all_weights, const Array& all_biases, const Array& x) {
  static const auto checkpointed_layer =
      cjax::checkpoint(layer, policies::dots_with_no_batch_dims_saveable());
  return scan(checkpointed_layer, x, WB{all_weights, all_biases}).first;
}

ShapeDtype f32(Shape s) {
  return ShapeDtype{DType::f32, std::move(s)};
}

// The tutorial's two layers: W = [[0.5, 0.5], [1, 1]], b = [0.5, 0.5] each, and x = ones.
std::vector<runtime::Buffer> tutorial_net_inputs() {
  ShapedArray w(DType::f32, {2, 2, 2}), b(DType::f32, {2, 2}), x(DType::f32, {2});
  std::vector<float> wv{0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.5f, 1.0f, 1.0f};
  return {runtime::Buffer::from_data<float>(w, wv), runtime::Buffer::full(b, 0.5),
          runtime::Buffer::full(x, 1.0)};
}

constexpr int64_t kDeepLayers = 64, kDeepWidth = 256, kDeepBatch = 32;

Example net_example(std::string name, std::string description,
                    std::function<Array(const Array&, const Array&, const Array&)> fn, bool deep) {
  return {std::move(name), std::move(description),
          [fn, deep] {
            if (deep)
              return cjax::make_jaxpr(fn, {"all_weights", "all_biases", "x"}, "net")(
                  f32({kDeepLayers, kDeepWidth, kDeepWidth}), f32({kDeepLayers, kDeepWidth}),
                  f32({kDeepBatch, kDeepWidth}));
            return cjax::make_jaxpr(fn, {"all_weights", "all_biases", "x"}, "net")(
                f32({2, 2, 2}), f32({2, 2}), f32({2}));
          },
          [deep] {
            if (!deep) return tutorial_net_inputs();
            double scale = 1.0 / std::sqrt(static_cast<double>(kDeepWidth));
            return std::vector<runtime::Buffer>{
                seeded({kDeepLayers, kDeepWidth, kDeepWidth}, 21, scale),
                seeded({kDeepLayers, kDeepWidth}, 22, 0.1),
                seeded({kDeepBatch, kDeepWidth}, 23, 1.0)};
          }};
}

// cond: sin(x) * y where x > 0, else cos(x) / y (the predicate a reduction of x).
Array cond_program(const Array& x, const Array& y) {
  return cjax::cond(
      np::sum(x) > 0.0, [](const Array& a, const Array& b) { return np::sin(a) * b; },
      [](const Array& a, const Array& b) { return np::cos(a) / b; }, x, y);
}

// fori_loop with static bounds (a scan): x <- tanh(W @ x) five times.
Array fori_program(const Array& W, const Array& x) {
  return cjax::fori_loop(
      0, 5, [&](const Array&, const Array& h) { return np::tanh(np::dot(W, h)); }, x);
}

// An explicit Euler integrator of dh/dt = tanh(a·h + b) - h/10 over `kEulerSteps` steps, the
// carry f32[64,256], under a scan checkpoint schedule; the loss is sum(h^2) at the end.
constexpr int64_t kEulerSteps = 100;

Array euler_program(const Array& a, const Array& b, const Array& h0, const ScanSchedule& s) {
  auto step = [&](const Array& h, const std::tuple<>&) {
    return std::pair{h + 0.01 * (np::tanh(a * h + b) - 0.1 * h), std::tuple<>{}};
  };
  const Array h = scan(step, h0, std::tuple<>{}, {.length = kEulerSteps, .checkpoint = s}).first;
  return np::sum(h * h);
}

Example euler_example(std::string name, std::string description, ScanSchedule s) {
  return {std::move(name), std::move(description),
          [s] {
            return cjax::make_jaxpr([s](const Array& a, const Array& b,
                                        const Array& h0) { return euler_program(a, b, h0, s); },
                                    {"a", "b", "h0"},
                                    "euler")(f32({64, 256}), f32({64, 256}), f32({64, 256}));
          },
          [] {
            return std::vector<runtime::Buffer>{
                seeded({64, 256}, 51, 0.5), seeded({64, 256}, 52, 0.1), seeded({64, 256}, 53, 1.0)};
          }};
}

// Newton's iteration for sqrt(a), until |x^2 - a| <= 1e-6·a: a data-dependent trip count, in a
// while_loop bounded by max_iters, so that reverse mode goes through it.
Array newton_sqrt_program(const Array& a) {
  auto not_converged = [&](const Array& x) { return np::max(np::abs(x * x - a) / a) > 1e-6; };
  auto newton_step = [&](const Array& x) { return 0.5 * (x + a / x); };
  return np::sum(while_loop(not_converged, newton_step, np::ones_like(a), {.max_iters = 50}));
}

}  // namespace

void register_control_flow_examples(std::vector<Example>& out) {
  out.push_back(net_example(
      "scan/net", "the tutorial's scan over layers: relu(x @ W + b), L = 2, width 2", net, false));
  out.push_back(net_example(
      "scan/net_checkpoint",
      "scan over checkpoint(layer, policy=dots_with_no_batch_dims_saveable), L = 2, width 2",
      net_checkpoint, false));
  out.push_back(net_example("scan/net_deep",
                            fmt::format("scan over layers, L = {}, width {}, batch {}", kDeepLayers,
                                        kDeepWidth, kDeepBatch),
                            net, true));
  out.push_back(net_example(
      "scan/net_deep_checkpoint",
      fmt::format("scan/net_deep over the checkpointed layer (dots_with_no_batch_dims_saveable)"),
      net_checkpoint, true));
  out.push_back({"cond/branches", "cond(sum(x) > 0, sin(x) * y, cos(x) / y)",
                 [] {
                   return cjax::make_jaxpr(cond_program, {"x", "y"}, "f")(f32({3}), f32({3}));
                 },
                 [] {
                   return std::vector<runtime::Buffer>{seeded({3}, 31, 1.0), seeded({3}, 32, 1.0)};
                 }});
  out.push_back(euler_example(
      "loop/euler",
      fmt::format("explicit Euler, {} steps of dh/dt = tanh(a*h + b) - h/10, h f32[64,256]: "
                  "`cjax memory` compares the scan's checkpoint schedules",
                  kEulerSteps),
      scan_schedules::none()));
  out.push_back(euler_example("loop/euler_binomial",
                              "loop/euler under scan_schedules::binomial(8): 8 carries saved",
                              scan_schedules::binomial(8)));
  out.push_back({"loop/newton_sqrt",
                 "sum(sqrt(a)) by Newton's iteration in while_loop(..., {.max_iters = 50}): "
                 "reverse-differentiable, gradient 1/(2 sqrt(a))",
                 [] { return cjax::make_jaxpr(newton_sqrt_program, {"a"}, "f")(f32({3})); },
                 [] {
                   return std::vector<runtime::Buffer>{runtime::Buffer::from_data<float>(
                       ShapedArray(DType::f32, {3}), std::vector<float>{2.0f, 9.0f, 0.25f})};
                 }});
  out.push_back(
      {"loop/fori", "fori_loop(0, 5, x <- tanh(W @ x)): a scan of 5 steps",
       [] {
         return cjax::make_jaxpr(fori_program, {"W", "x"}, "f")(f32({3, 3}), f32({3}));
       },
       [] {
         return std::vector<runtime::Buffer>{seeded({3, 3}, 41, 1.0), seeded({3}, 42, 1.0)};
       }});
}

}  // namespace cjax::examples
