// The programs of JAX's gradient-checkpointing tutorial (docs/gradient-checkpointing.md), in C++.
#include <fmt/format.h>

#include "cjax/api.h"
#include "examples/inputs.h"
#include "examples/registry.h"
#include "examples/tutorial_programs.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;

}  // namespace

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

Array layer(const Array& W, const Array& x) {
  return np::sin(np::dot(W, x));
}

Array predict(const std::vector<Array>& params, const Array& x, bool named) {
  Array h = x;
  for (size_t i = 0; i + 1 < params.size(); ++i) {
    h = layer(params[i], h);
    if (named) h = cjax::checkpoint_name(h, fmt::format("layer{}_output", i));
  }
  return np::dot(params.back(), h);
}

Array loss(const std::vector<Array>& params, const Array& x, const Array& y) {
  Array d = predict(params, x) - y;
  return np::sum(np::power(d, 2));
}

Array loss_named(const std::vector<Array>& params, const Array& x, const Array& y) {
  Array d = predict(params, x, /*named=*/true) - y;
  return np::sum(np::power(d, 2));
}

Array chain(const Array& x, int n) {
  Array h = x;
  for (int i = 0; i < n; ++i) h = np::sin(h);
  return h;
}

Array sin_fn(const Array& x) {
  return np::sin(x);
}

Array sin_sin(const Array& x) {
  Array y = np::sin(x);
  return np::sin(y);
}

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

namespace {

ShapeDtype f32(Shape s) {
  return ShapeDtype{DType::f32, std::move(s)};
}
// A Python float argument: a weak-typed f32 scalar.
ShapeDtype python_float() {
  return ShapeDtype{DType::f32, {}, /*weak_type=*/true};
}

std::vector<runtime::Buffer> scalar(double v) {
  return {runtime::Buffer::full(ShapedArray(DType::f32, {}, true), v)};
}

Jaxpr trace_loss() {
  std::vector<Array> params{Array(f32({4, 4})), Array(f32({4, 4})), Array(f32({4, 4}))};
  return cjax::make_jaxpr(loss, {"params", "x", "y"}, "loss")(params, f32({4}), f32({4}));
}

Example chain_example(int n) {
  return {
      fmt::format("tutorial/chain{}", n),
      fmt::format("chain_compose([sin] * {}) at 3.0: residuals grow linearly with the chain", n),
      [n] {
        auto f = [n](const Array& x) { return chain(x, n); };
        return cjax::make_jaxpr(f, {"x"}, "f")(python_float());
      },
      [] { return scalar(3.0); }};
}

}  // namespace

void register_tutorial_examples(std::vector<Example>& out) {
  out.push_back(
      {"tutorial/f",
       "g(W, x) = sin(dot(W, x)) applied with W1 f32[5,4], W2 f32[6,5], W3 f32[7,6] to x f32[4]",
       [] {
         return cjax::make_jaxpr(f, {"W1", "W2", "W3", "x"}, "f")(f32({5, 4}), f32({6, 5}),
                                                                  f32({7, 6}), f32({4}));
       },
       [] {
         return ones({{5, 4}, {6, 5}, {7, 6}, {4}});
       }});
  out.push_back({"tutorial/loss",
                 "sum((predict(params, x) - y)**2), predict = 2 sin-dot layers then a dot; "
                 "params = [W1, W2, W3] f32[4,4], x, y f32[4]",
                 trace_loss, [] {
                   return ones({{4, 4}, {4, 4}, {4, 4}, {4}, {4}});
                 }});
  out.push_back(chain_example(8));
  out.push_back(chain_example(16));
  out.push_back({"tutorial/sin_sin", "the jax.checkpoint docstring's g(x) = sin(sin(x)) at 2.0",
                 [] { return cjax::make_jaxpr(sin_sin, {"x"}, "g")(python_float()); },
                 [] { return scalar(2.0); }});
}

}  // namespace cjax::examples
