// The tutorial's checkpointed programs: f2, f3, f4, the policy section's loss variants,
// recursive checkpointing, the computation-block MLP and the checkpoint-policy exercise.
#include <fmt/format.h>

#include <functional>

#include "cjax/api.h"
#include "examples/inputs.h"
#include "examples/registry.h"
#include "examples/tutorial_programs.h"
#include "passes/policies.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;

// The exercise: sum((relu(x @ w1) @ w2) ** 2) in one checkpoint saving the dots.
Array dot_pipeline(const Array& w1, const Array& w2, const Array& x) {
  Array y = np::matmul(x, w1);
  y = nn::relu(y);
  y = np::matmul(y, w2);
  return np::sum(np::power(y, 2));
}

ShapeDtype f32(Shape s) {
  return ShapeDtype{DType::f32, std::move(s)};
}
ShapeDtype python_float() {
  return ShapeDtype{DType::f32, {}, true};
}

Example tutorial_f_variant(
    std::string name, std::string description,
    std::function<Array(const Array&, const Array&, const Array&, const Array&)> fn) {
  return {std::move(name), std::move(description),
          [fn] {
            return cjax::make_jaxpr(fn, {"W1", "W2", "W3", "x"}, "f")(f32({5, 4}), f32({6, 5}),
                                                                      f32({7, 6}), f32({4}));
          },
          [] {
            return ones({{5, 4}, {6, 5}, {7, 6}, {4}});
          }};
}

Example loss_variant(
    std::string name, std::string description,
    std::function<Array(const std::vector<Array>&, const Array&, const Array&)> fn) {
  return {std::move(name), std::move(description),
          [fn] {
            std::vector<Array> params{Array(f32({4, 4})), Array(f32({4, 4})), Array(f32({4, 4}))};
            return cjax::make_jaxpr(fn, {"params", "x", "y"}, "loss")(params, f32({4}), f32({4}));
          },
          [] {
            return ones({{4, 4}, {4, 4}, {4, 4}, {4}, {4}});
          }};
}

Example recursive_example(int n) {
  return {fmt::format("tutorial/recursive{}", n),
          fmt::format("recursive_checkpoint([sin] * {}) at 3.0: O(log2 D) residuals", n),
          [n] {
            Fn fn = recursive_checkpoint(std::vector<Fn>(static_cast<size_t>(n), sin_fn));
            return cjax::make_jaxpr(fn, {"x"}, "f")(python_float());
          },
          [] {
            return std::vector<runtime::Buffer>{
                runtime::Buffer::full(ShapedArray(DType::f32, {}, true), 3.0)};
          }};
}

}  // namespace

void register_checkpoint_examples(std::vector<Example>& out) {
  out.push_back(
      tutorial_f_variant("tutorial/f2", "f with checkpoint(g) at each of the three calls", f2));
  auto f3 = cjax::checkpoint(f, policies::dots_with_no_batch_dims_saveable());
  out.push_back(tutorial_f_variant("tutorial/f3",
                                   "checkpoint(f, policy=dots_with_no_batch_dims_saveable)", f3));
  auto f4c = cjax::checkpoint(f4, policies::save_only_these_names({"a"}));
  out.push_back(tutorial_f_variant(
      "tutorial/f4", "layer outputs named a, b, c; checkpoint with save_only_these_names('a')",
      f4c));
  out.push_back(loss_variant("tutorial/loss_checkpoint",
                             "checkpoint(loss, policy=dots_with_no_batch_dims_saveable)",
                             cjax::checkpoint(loss, policies::dots_with_no_batch_dims_saveable())));
  out.push_back(loss_variant("tutorial/loss_named",
                             "loss whose predict names each layer output layer{i}_output",
                             loss_named));
  out.push_back(loss_variant(
      "tutorial/loss_checkpoint2",
      "checkpoint(loss_named, policy=save_any_names_but_these('layer1_output'))",
      cjax::checkpoint(loss_named, policies::save_any_names_but_these({"layer1_output"}))));
  out.push_back(recursive_example(8));
  out.push_back(recursive_example(16));
  out.push_back({"block/mlp_checkpoint",
                 "block/mlp with checkpoint around the MLP block (recomputed in the backward pass)",
                 [] {
                   return cjax::make_jaxpr(mlp_checkpoint_loss, {"x", "W1", "W2", "targets"},
                                           "loss")(f32({64, 512}), f32({512, 8192}),
                                                   f32({8192, 512}), f32({64, 512}));
                 },
                 mlp_block_inputs});
  auto exercise = cjax::checkpoint(dot_pipeline, policies::dots_with_no_batch_dims_saveable());
  out.push_back(
      {"exercise/checkpoint_dot_policy",
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
