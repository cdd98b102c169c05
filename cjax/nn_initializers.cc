#include "cjax/nn_initializers.h"

#include <fmt/format.h>

#include <cmath>

#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/operators.h"
#include "cjax/random.h"
#include "ir/errors.h"

namespace cjax::nn::initializers {
namespace {

namespace np = cjax::numpy;

// JAX's _compute_fans: the in and out axes' sizes, each times the receptive field (the product
// of the other, non-batch axes).
std::pair<double, double> fans(const Shape& shape, int64_t in_axis, int64_t out_axis,
                               const std::vector<int64_t>& batch_axis) {
  const auto rank = int64_t(shape.size());
  if (rank < 2)
    throw TypeError(fmt::format(
        "variance_scaling: the shape {} needs an input and an output axis (rank 2 or more)",
        shape_str(shape)));
  auto norm = [&](int64_t a) { return a < 0 ? a + rank : a; };
  const int64_t in = norm(in_axis), out = norm(out_axis);
  double receptive = 1;
  for (int64_t d = 0; d < rank; ++d) {
    bool batch = false;
    for (int64_t b : batch_axis) batch = batch || norm(b) == d;
    if (d != in && d != out && !batch) receptive *= double(shape[size_t(d)]);
  }
  return {double(shape[size_t(in)]) * receptive, double(shape[size_t(out)]) * receptive};
}

Array scalar(double v, DType dtype) {
  return Array::scalar(v, dtype);
}

}  // namespace

Initializer variance_scaling(double scale, FanMode mode, Distribution distribution, int64_t in_axis,
                             int64_t out_axis, std::vector<int64_t> batch_axis) {
  return [=](const Array& key, const Shape& shape, DType dtype) -> Array {
    if (!is_floating(dtype))
      throw TypeError(
          fmt::format("variance_scaling: dtype must be floating point, got {}", long_name(dtype)));
    const auto [fan_in, fan_out] = fans(shape, in_axis, out_axis, batch_axis);
    const double denominator = mode == FanMode::fan_in    ? fan_in
                               : mode == FanMode::fan_out ? fan_out
                                                          : (fan_in + fan_out) / 2;
    const Array variance = scalar(scale / denominator, dtype);
    switch (distribution) {
      case Distribution::truncated_normal: {
        // The standard deviation of a standard normal truncated to (-2, 2).
        const Array stddev = np::sqrt(variance) / scalar(.87962566103423978, dtype);
        return random::truncated_normal(key, -2, 2, shape, dtype) * stddev;
      }
      case Distribution::normal:
        return random::normal(key, shape, dtype) * np::sqrt(variance);
      case Distribution::uniform:
        return random::uniform(key, shape, dtype, -1) * np::sqrt(3 * variance);
    }
    throw TypeError("variance_scaling: unknown distribution");
  };
}

Initializer glorot_normal() {
  return variance_scaling(1.0, FanMode::fan_avg, Distribution::truncated_normal);
}
Initializer glorot_uniform() {
  return variance_scaling(1.0, FanMode::fan_avg, Distribution::uniform);
}
Initializer lecun_normal() {
  return variance_scaling(1.0, FanMode::fan_in, Distribution::truncated_normal);
}
Initializer lecun_uniform() {
  return variance_scaling(1.0, FanMode::fan_in, Distribution::uniform);
}
Initializer he_normal() {
  return variance_scaling(2.0, FanMode::fan_in, Distribution::truncated_normal);
}
Initializer he_uniform() {
  return variance_scaling(2.0, FanMode::fan_in, Distribution::uniform);
}
Initializer xavier_normal() {
  return glorot_normal();
}
Initializer xavier_uniform() {
  return glorot_uniform();
}
Initializer kaiming_normal() {
  return he_normal();
}
Initializer kaiming_uniform() {
  return he_uniform();
}

Initializer normal(double stddev) {
  return [=](const Array& key, const Shape& shape, DType dtype) {
    return random::normal(key, shape, dtype) * scalar(stddev, dtype);
  };
}
Initializer uniform(double scale) {
  return [=](const Array& key, const Shape& shape, DType dtype) {
    return random::uniform(key, shape, dtype) * scalar(scale, dtype);
  };
}
Initializer truncated_normal(double stddev) {
  return [=](const Array& key, const Shape& shape, DType dtype) {
    return random::truncated_normal(key, -2, 2, shape, dtype) * scalar(stddev, dtype);
  };
}
Initializer zeros() {
  return [](const Array&, const Shape& shape, DType dtype) { return np::zeros(shape, dtype); };
}
Initializer ones() {
  return [](const Array&, const Shape& shape, DType dtype) { return np::ones(shape, dtype); };
}
Initializer constant(double value) {
  return
      [=](const Array&, const Shape& shape, DType dtype) { return np::full(shape, value, dtype); };
}

}  // namespace cjax::nn::initializers
