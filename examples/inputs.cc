#include "examples/inputs.h"

#include <cmath>

namespace cjax::examples {

std::vector<runtime::Buffer> ones(const std::vector<Shape>& shapes) {
  std::vector<runtime::Buffer> out;
  for (const Shape& s : shapes)
    out.push_back(runtime::Buffer::full(ShapedArray(DType::f32, s), 1.0));
  return out;
}

runtime::Buffer seeded(const Shape& shape, uint64_t seed, double scale) {
  ShapedArray aval(DType::f32, shape);
  std::vector<float> data(static_cast<size_t>(aval.size()));
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float& v : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(scale * ((state >> 11) * 0x1.0p-53 * 2.0 - 1.0));
  }
  return runtime::Buffer::from_data<float>(aval, data);
}

std::vector<runtime::Buffer> mlp_block_inputs() {
  return {seeded({64, 512}, 1, 1.0), seeded({512, 8192}, 2, 1.0 / std::sqrt(512.0)),
          seeded({8192, 512}, 3, 1.0 / std::sqrt(8192.0)), seeded({64, 512}, 4, 1.0)};
}

}  // namespace cjax::examples
