// The tutorial's checkpointed programs: f2, f3, f4, the policy section's loss variants,
// recursive checkpointing, the computation-block MLP and the checkpoint-policy exercise.
#include <fmt/format.h>

#include <functional>

#include "compiler/cjax.h"
#include "examples/inputs.h"
#include "examples/registry.h"
#include "passes/policies.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;
using Fn = std::function<Array(const Array&)>;

Array g(const Array& W, const Array& x) {
  Array y = np::dot(W, x);
  return np::sin(y);
}

Array f(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  Array h = g(W1, x);
  h = g(W2, h);
  h = g(W3, h);
  return h;
}

// checkpoint(g) at each call site.
Array f2(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  Array h = cjax::checkpoint(g)(W1, x);
  h = cjax::checkpoint(g)(W2, h);
  h = cjax::checkpoint(g)(W3, h);
  return h;
}

Array f4(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  Array h = cjax::checkpoint_name(g(W1, x), "a");
  h = cjax::checkpoint_name(g(W2, h), "b");
  h = cjax::checkpoint_name(g(W3, h), "c");
  return h;
}

Array layer(const Array& W, const Array& x) { return np::sin(np::dot(W, x)); }

// predict with (named=true) or without checkpoint_name on each layer's output.
Array predict(const std::vector<Array>& params, const Array& x, bool named) {
  Array h = x;
  for (size_t i = 0; i + 1 < params.size(); ++i) {
    h = layer(params[i], h);
    if (named) h = cjax::checkpoint_name(h, fmt::format("layer{}_output", i));
  }
  return np::dot(params.back(), h);
}

Array loss(const std::vector<Array>& params, const Array& x, const Array& y) {
  Array d = predict(params, x, false) - y;
  return np::sum(np::power(d, 2));
}

Array loss_named(const std::vector<Array>& params, const Array& x, const Array& y) {
  Array d = predict(params, x, true) - y;
  return np::sum(np::power(d, 2));
}

// The tutorial's recursive_checkpoint: O(log2 D) residuals for a chain of D functions.
Fn recursive_checkpoint(const std::vector<Fn>& funs) {
  if (funs.size() == 1) return funs[0];
  if (funs.size() == 2) {
    Fn f1 = funs[0], f2 = funs[1];
    return [f1, f2](const Array& x) { return f1(f2(x)); };
  }
  size_t half = funs.size() / 2;
  Fn f1 = recursive_checkpoint({funs.begin(), funs.begin() + static_cast<std::ptrdiff_t>(half)});
  Fn f2 = recursive_checkpoint({funs.begin() + static_cast<std::ptrdiff_t>(half), funs.end()});
  return [f1, f2](const Array& x) { return f1(cjax::checkpoint(f2)(x)); };
}

Array sin_fn(const Array& x) { return np::sin(x); }

// The computation-block article: the MLP block (gelu(x @ W1) @ W2) under one checkpoint.
Array mlp_block(const Array& x, const Array& W1, const Array& W2) {
  Array h = nn::gelu(np::matmul(x, W1));
  return np::matmul(h, W2);
}

Array mlp_checkpoint_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets) {
  Array out = cjax::checkpoint(mlp_block)(x, W1, W2);
  return np::mean(np::power(out - targets, 2));
}

// The exercise: sum((relu(x @ w1) @ w2) ** 2) in one checkpoint saving the dots.
Array dot_pipeline(const Array& w1, const Array& w2, const Array& x) {
  Array y = np::matmul(x, w1);
  y = nn::relu(y);
  y = np::matmul(y, w2);
  return np::sum(np::power(y, 2));
}

ShapeDtype f32(Shape s) { return ShapeDtype{DType::f32, std::move(s)}; }
ShapeDtype python_float() { return ShapeDtype{DType::f32, {}, true}; }

Example tutorial_f_variant(std::string name, std::string description,
                           std::function<Array(const Array&, const Array&, const Array&, const Array&)> fn) {
  return {std::move(name), std::move(description),
          [fn] {
            return cjax::make_jaxpr(fn, {"W1", "W2", "W3", "x"}, "f")(f32({5, 4}), f32({6, 5}),
                                                                    f32({7, 6}), f32({4}));
          },
          [] { return ones({{5, 4}, {6, 5}, {7, 6}, {4}}); }};
}

Example loss_variant(std::string name, std::string description,
                     std::function<Array(const std::vector<Array>&, const Array&, const Array&)> fn) {
  return {std::move(name), std::move(description),
          [fn] {
            std::vector<Array> params{Array(f32({4, 4})), Array(f32({4, 4})), Array(f32({4, 4}))};
            return cjax::make_jaxpr(fn, {"params", "x", "y"}, "loss")(params, f32({4}), f32({4}));
          },
          [] { return ones({{4, 4}, {4, 4}, {4, 4}, {4}, {4}}); }};
}

Example recursive_example(int n) {
  return {fmt::format("tutorial/recursive{}", n),
          fmt::format("recursive_checkpoint([sin] * {}) at 3.0: O(log2 D) residuals", n),
          [n] {
            Fn fn = recursive_checkpoint(std::vector<Fn>(static_cast<size_t>(n), sin_fn));
            return cjax::make_jaxpr(fn, {"x"}, "f")(python_float());
          },
          [] { return std::vector<runtime::Buffer>{runtime::Buffer::full(ShapedArray(DType::f32, {}, true), 3.0)}; }};
}

}  // namespace

void register_checkpoint_examples(std::vector<Example>& out) {
  out.push_back(tutorial_f_variant("tutorial/f2", "f with checkpoint(g) at each of the three calls", f2));
  auto f3 = cjax::checkpoint(f, policies::dots_with_no_batch_dims_saveable());
  out.push_back(tutorial_f_variant("tutorial/f3", "checkpoint(f, policy=dots_with_no_batch_dims_saveable)", f3));
  auto f4c = cjax::checkpoint(f4, policies::save_only_these_names({"a"}));
  out.push_back(tutorial_f_variant(
      "tutorial/f4", "layer outputs named a, b, c; checkpoint with save_only_these_names('a')", f4c));
  out.push_back(loss_variant("tutorial/loss_checkpoint",
                             "checkpoint(loss, policy=dots_with_no_batch_dims_saveable)",
                             cjax::checkpoint(loss, policies::dots_with_no_batch_dims_saveable())));
  out.push_back(loss_variant("tutorial/loss_named",
                             "loss whose predict names each layer output layer{i}_output", loss_named));
  out.push_back(loss_variant("tutorial/loss_checkpoint2",
                             "checkpoint(loss_named, policy=save_any_names_but_these('layer1_output'))",
                             cjax::checkpoint(loss_named, policies::save_any_names_but_these({"layer1_output"}))));
  out.push_back(recursive_example(8));
  out.push_back(recursive_example(16));
  out.push_back({"block/mlp_checkpoint",
                 "block/mlp with checkpoint around the MLP block (recomputed in the backward pass)",
                 [] {
                   return cjax::make_jaxpr(mlp_checkpoint_loss, {"x", "W1", "W2", "targets"}, "loss")(
                       f32({64, 512}), f32({512, 8192}), f32({8192, 512}), f32({64, 512}));
                 },
                 mlp_block_inputs});
  auto exercise = cjax::checkpoint(dot_pipeline, policies::dots_with_no_batch_dims_saveable());
  out.push_back({"exercise/checkpoint_dot_policy",
                 "sum((relu(x @ w1) @ w2)**2) in one checkpoint with dots_with_no_batch_dims_saveable",
                 [exercise] {
                   return cjax::make_jaxpr(exercise, {"w1", "w2", "x"}, "checkpoint_dot_policy")(
                       f32({4, 4}), f32({4, 4}), f32({8, 4}));
                 },
                 [] {
                   return std::vector<runtime::Buffer>{seeded({4, 4}, 11, 1.0), seeded({4, 4}, 12, 1.0),
                                                       seeded({8, 4}, 13, 1.0)};
                 }});
}

}  // namespace cjax::examples
