// User-defined derivatives: a custom_vjp that clips the cotangent (gradient clipping), and JAX's
// numerically stable log-sum-exp with its custom_jvp rule (jax.custom_jvp's tutorial).
#include <cstdint>
#include <tuple>
#include <utility>

#include "cjax/api.h"
#include "examples/registry.h"

namespace cjax::examples {
namespace {
namespace np = cjax::numpy;

using Unary = CustomVjp<Array, const Array&>;
using UnaryJvp = CustomJvp<Array, const Array&>;

// The identity, whose backward pass clips each cotangent to [-1, 1].
const Unary& clip_gradient() {
  static const Unary f = [] {
    Unary g([](const Array& x) { return x; }, "clip_gradient");
    g.defvjp(
        [](const Array& x) {
          return std::pair{x, std::tuple<>{}};
        },
        [](const std::tuple<>&, const Array& ct) { return np::clip(ct, -1.0, 1.0); }, "_clip_fwd",
        "_clip_bwd");
    return g;
  }();
  return f;
}

// sum(clip_gradient(x) * 3): the gradient is 3 per element, clipped to 1.
Array clipped_loss(const Array& x) {
  return np::sum(clip_gradient()(x) * 3.0);
}

// log(sum(exp(x))) with the max subtracted; its rule is the softmax times the tangent.
const UnaryJvp& stable_lse() {
  static const UnaryJvp f = [] {
    UnaryJvp g(
        [](const Array& x) {
          const Array m = np::max(x);
          return m + np::log(np::sum(np::exp(x - m)));
        },
        "stable_lse");
    g.defjvp(
        [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
          auto [x] = primals;
          auto [t] = tangents;
          const Array y = stable_lse()(x);
          return std::pair{y, np::sum(np::exp(x - y) * t)};
        },
        "_stable_lse_jvp");
    return g;
  }();
  return f;
}

// tanh(x @ w) whose fwd names its activation "features" (checkpoint_name) and saves it, with x
// and w, for a bwd that needs no tanh.
using Binary = CustomVjp<Array, const Array&, const Array&>;
const Binary& dense_tanh() {
  static const Binary f = [] {
    Binary g([](const Array& x, const Array& w) { return np::tanh(np::matmul(x, w)); },
             "dense_tanh");
    g.defvjp(
        [](const Array& x, const Array& w) {
          const Array y = checkpoint_name(np::tanh(np::matmul(x, w)), "features");
          return std::pair{y, std::tuple{x, w, y}};
        },
        [](const std::tuple<Array, Array, Array>& res, const Array& ct) {
          auto [x, w, y] = res;
          const Array gz = ct * (1.0 - y * y);
          const Array dx = np::matmul(gz, np::transpose(w));
          const Array dw = np::matmul(np::transpose(x), gz);
          return std::tuple{dx, dw};
        },
        "dense_tanh_fwd", "dense_tanh_bwd");
    return g;
  }();
  return f;
}

Array dense_tanh_loss(const Array& x, const Array& w) {
  return np::sum(np::square(dense_tanh()(x, w)));
}

Jaxpr remat_dense_tanh(const PolicyRef& policy) {
  return cjax::make_jaxpr(checkpoint(dense_tanh_loss, policy), {"x", "w"}, "dense_tanh_loss")(
      ShapeDtype{DType::f32, {8, 16}}, ShapeDtype{DType::f32, {16, 32}});
}

std::vector<runtime::Buffer> dense_tanh_inputs() {
  std::vector<float> x(8 * 16), w(16 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 13) - 6) * 0.05f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3) * 0.04f;
  return {runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {8, 16}), x),
          runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {16, 32}), w)};
}

std::vector<runtime::Buffer> three(std::vector<float> v) {
  return {runtime::Buffer::from_data<float>(ShapedArray(DType::f32, {3}), v)};
}

}  // namespace

void register_custom_examples(std::vector<Example>& out) {
  out.push_back(
      {"custom/clip_gradient",
       "sum(clip_gradient(x) * 3): a custom_vjp whose bwd clips the cotangent to "
       "[-1, 1] (gradient 1, not 3)",
       [] {
         return cjax::make_jaxpr(clipped_loss, {"x"}, "clipped_loss")(ShapeDtype{DType::f32, {3}});
       },
       [] {
         return three({0.5f, -2.0f, 3.0f});
       }});
  out.push_back({"custom/stable_logsumexp",
                 "log(sum(exp(x))) with the max subtracted, differentiated by its custom_jvp "
                 "rule (the softmax)",
                 [] {
                   auto f = [](const Array& x) { return stable_lse()(x); };
                   return cjax::make_jaxpr(f, {"x"}, "stable_lse")(ShapeDtype{DType::f32, {3}});
                 },
                 [] {
                   return three({0.5f, -1.25f, 2.0f});
                 }});
  out.push_back(
      {"custom/remat_fwd_once",
       "sum(dense_tanh(x, w)^2) in checkpoint(nothing_saveable), dense_tanh a custom_vjp: "
       "the backward program runs its fwd once, not twice",
       [] { return remat_dense_tanh(policies::nothing_saveable()); }, dense_tanh_inputs});
  out.push_back({"custom/remat_fwd_named",
                 "the same in checkpoint(save_only_these_names(features)): the name given in "
                 "the fwd is saved, and nothing is recomputed",
                 [] { return remat_dense_tanh(policies::save_only_these_names({"features"})); },
                 dense_tanh_inputs});
}

}  // namespace cjax::examples
