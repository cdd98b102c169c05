// The programs of JAX's gradient-checkpointing tutorial (docs/gradient-checkpointing.md), in C++.
#include "compiler/cjax.h"
#include "examples/registry.h"

namespace cjax::examples {
namespace {

namespace np = cjax::numpy;

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

std::vector<runtime::Buffer> ones(const std::vector<Shape>& shapes) {
  std::vector<runtime::Buffer> out;
  for (const Shape& s : shapes) out.push_back(runtime::Buffer::full(ShapedArray(DType::f32, s), 1.0));
  return out;
}

ShapeDtype f32(Shape s) { return ShapeDtype{DType::f32, std::move(s)}; }

}  // namespace

void register_tutorial_examples(std::vector<Example>& out) {
  out.push_back({"tutorial/f", "g(W, x) = sin(dot(W, x)) applied with W1 f32[5,4], W2 f32[6,5], W3 f32[7,6] to x f32[4]",
                 [] {
                   return cjax::make_jaxpr(f, {"W1", "W2", "W3", "x"}, "f")(f32({5, 4}), f32({6, 5}),
                                                                          f32({7, 6}), f32({4}));
                 },
                 [] { return ones({{5, 4}, {6, 5}, {7, 6}, {4}}); }});
}

}  // namespace cjax::examples
