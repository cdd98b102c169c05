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
}

}  // namespace cjax::examples
