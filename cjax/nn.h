// cjax::nn: activation functions of jax.nn (jax/_src/nn/functions.py).
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax::nn {

// max(x, 0), as jax.nn.relu: a custom_jvp function (derivative 0 at 0) of a jitted body, so it
// traces to `custom_jvp_call[name=relu ...]` around `jit[name=relu]`.
Array relu(const Array& x, SourceInfo src = std::source_location::current());
// min(max(x, 0), 6), as jax.nn.relu6 (derivative 0 at 0 and 6).
Array relu6(const Array& x, SourceInfo src = std::source_location::current());
// logistic(x), as jax.nn.sigmoid.
Array sigmoid(const Array& x, SourceInfo src = std::source_location::current());
// x * sigmoid(x); jax.nn.silu is jitted, so while tracing this is `jit[name=silu]`.
Array silu(const Array& x, SourceInfo src = std::source_location::current());
// The tanh approximation (approximate=True, JAX's default):
//   x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))))
// traced to the same equations as jax.nn.gelu; approximate=false gives the erfc form
//   0.5 * x * erfc(-x * sqrt(1/2)).
Array gelu(const Array& x, bool approximate = true,
           SourceInfo src = std::source_location::current());
// log(1 + exp(x)), as jax.nn.softplus: jitted, jnp.logaddexp(x, 0), whose custom_jvp rule stays
// finite at infinities.
Array softplus(const Array& x, SourceInfo src = std::source_location::current());
// log(sigmoid(x)) = -softplus(-x), jitted, as jax.nn.log_sigmoid.
Array log_sigmoid(const Array& x, SourceInfo src = std::source_location::current());
// exp(x - max) / sum(exp(x - max)) along `axis`, the max held constant (stop_gradient), as
// jax.nn.softmax traces it.
Array softmax(const Array& x, int64_t axis = -1, SourceInfo src = std::source_location::current());
// (x - max) - log(sum(exp(x - max))) along `axis`; jitted, as jax.nn.log_softmax.
Array log_softmax(const Array& x, int64_t axis = -1,
                  SourceInfo src = std::source_location::current());
// log(sum(exp(x))) over every element, stabilised by the (finite) max, as
// jax.nn.logsumexp(x) (jax.scipy.special.logsumexp with axis=None).
Array logsumexp(const Array& x, SourceInfo src = std::source_location::current());

// jax.nn.dot_product_attention (its XLA implementation): query [B, T, N, H], key and value
// [B, S, K, H] (K dividing N: grouped-query attention), an optional bias and boolean mask
// broadcastable to [B, N, T, S], `scale` 1/sqrt(H) unless given, `is_causal` for a lower
// triangular mask. Rank-3 inputs get a leading batch of 1.
Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            std::optional<Array> bias = std::nullopt,
                            std::optional<Array> mask = std::nullopt,
                            std::optional<double> scale = std::nullopt, bool is_causal = false,
                            SourceInfo src = std::source_location::current());
// One-hot vectors: x (integers) compared with 0..num_classes-1 along a new axis `axis`, as
// jax.nn.one_hot (`jit[name=_one_hot]`); indices out of range give all-zero rows.
Array one_hot(const Array& x, int64_t num_classes, DType dtype = DType::f32, int64_t axis = -1,
              SourceInfo src = std::source_location::current());

// Inverted dropout: each element of x kept with probability 1 - rate (random::bernoulli on
// `key`) and scaled by 1 / (1 - rate), the others zero; x itself for rate 0, zeros for rate 1.
// Under checkpoint, the mask is recomputed from the key in the backward pass, never saved.
Array dropout(const Array& key, double rate, const Array& x,
              SourceInfo src = std::source_location::current());

// Normalisation over the last axis, with a per-feature scale (and bias); jax.nn has neither, so
// these are what Flax's LayerNorm and RMSNorm compute, written in numpy:
//   layer_norm: (x - mean) * rsqrt(mean((x - mean)^2) + epsilon) * scale + bias
//   rms_norm:   x * rsqrt(mean(x^2) + epsilon) * scale
// scale and bias are scalars or vectors of the last axis's length.
Array layer_norm(const Array& x, const Array& scale, const Array& bias, double epsilon = 1e-5,
                 SourceInfo src = std::source_location::current());
Array rms_norm(const Array& x, const Array& scale, double epsilon = 1e-6,
               SourceInfo src = std::source_location::current());
}  // namespace cjax::nn

namespace cjax::numpy {
using nn::gelu;
using nn::relu;
using nn::relu6;
using nn::sigmoid;
}  // namespace cjax::numpy
