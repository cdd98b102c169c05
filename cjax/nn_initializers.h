// cjax::nn::initializers: jax.nn.initializers, weight initialisers drawn from PRNG keys. Each is
// a function (key, shape, dtype) -> Array, JAX's values for the same key:
//
//   auto init = cjax::nn::initializers::glorot_normal();
//   Array W = init(cjax::random::key(0), {512, 256}, DType::f32);
//
// variance_scaling(scale, mode, distribution) is the family: the variance is scale / fan, with
// the fan the input size (fan_in), the output size (fan_out) or their mean (fan_avg), computed
// from the shape's in_axis and out_axis (the other axes multiply both, a convolution's receptive
// field), and the samples a normal truncated to ±2 standard deviations, a normal or a uniform.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cjax/array.h"

namespace cjax::nn::initializers {

using Initializer = std::function<Array(const Array& key, const Shape& shape, DType dtype)>;

enum class FanMode { fan_in, fan_out, fan_avg };
enum class Distribution { truncated_normal, normal, uniform };

Initializer variance_scaling(double scale, FanMode mode, Distribution distribution,
                             int64_t in_axis = -2, int64_t out_axis = -1,
                             std::vector<int64_t> batch_axis = {});
Initializer glorot_normal();   // variance_scaling(1, fan_avg, truncated_normal); xavier_normal
Initializer glorot_uniform();  // variance_scaling(1, fan_avg, uniform); xavier_uniform
Initializer lecun_normal();    // variance_scaling(1, fan_in, truncated_normal)
Initializer lecun_uniform();   // variance_scaling(1, fan_in, uniform)
Initializer he_normal();       // variance_scaling(2, fan_in, truncated_normal); kaiming_normal
Initializer he_uniform();      // variance_scaling(2, fan_in, uniform); kaiming_uniform
Initializer xavier_normal();
Initializer xavier_uniform();
Initializer kaiming_normal();
Initializer kaiming_uniform();
// N(0, stddev²), U[0, scale), N(0, stddev²) truncated to ±2 stddev; constants.
Initializer normal(double stddev = 1e-2);
Initializer uniform(double scale = 1e-2);
Initializer truncated_normal(double stddev = 1e-2);
Initializer zeros();
Initializer ones();
Initializer constant(double value);

}  // namespace cjax::nn::initializers
