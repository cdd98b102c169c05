// Default inputs of the examples: arrays of ones (as the tutorial uses) and reproducible
// pseudo-random arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/buffer.h"

namespace cjax::examples {

std::vector<runtime::Buffer> ones(const std::vector<Shape>& shapes);
// Values in [-scale, scale) from a fixed-seed generator.
runtime::Buffer seeded(const Shape& shape, uint64_t seed, double scale);
// x, W1, W2, targets of the computation-block MLP, scaled like a Glorot initialisation.
std::vector<runtime::Buffer> mlp_block_inputs();

}  // namespace cjax::examples
