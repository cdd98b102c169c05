// jax.nn.dot_product_attention's XLA implementation (jax/_src/nn/functions.py:
// _dot_product_attention_xla, _dot_product_attention_core, _apply_masks): queries grouped by
// key head (grouped-query attention), the core vmapped over the group axis, einsum for the
// scores and the weighted values, masks applied with a large negative number, softmax in f32.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/nn.h"
#include "cjax/numpy.h"
#include "cjax/promotion.h"
#include "cjax/vmap.h"

namespace cjax::nn {
namespace {

namespace jnp = cjax::numpy;

// _ensure_4d: leading axes of size 1 up to [B, T, N, H].
Array ensure_4d(const Array& t, const SourceInfo& src) {
  if (t.ndim() >= 4) return t;
  std::vector<int64_t> axes;
  for (int64_t k = 0; k < 4 - t.ndim(); ++k) axes.push_back(k);
  return jnp::expand_dims(t, axes, src);
}

// _reshape_to_grouped: a [B, N, T, S] bias or mask as [B, K, G, T, S] (N == 1 broadcasts).
Array to_grouped(const Array& t, int64_t K, int64_t G, int64_t N, const SourceInfo& src) {
  const Shape& s = t.shape();
  if (s[1] == 1) {
    const Array one = t[{Slice{}, Slice{}, NewAxisIndex{}, Slice{}, Slice{}}];
    return jnp::broadcast_to(one, {s[0], s[1], G, s[2], s[3]}, src);
  }
  if (s[1] != N)
    throw_type_error(src, fmt::format("dot_product_attention: a bias or mask of {} heads for {} "
                                      "query heads",
                                      s[1], N));
  return jnp::reshape(t, {s[0], K, G, s[2], s[3]}, src);
}

}  // namespace

Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            std::optional<Array> bias, std::optional<Array> mask,
                            std::optional<double> scale, bool is_causal, SourceInfo src) {
  const Shape output_shape = query.shape();
  const Array q = ensure_4d(query, src), k = ensure_4d(key, src), v = ensure_4d(value, src);
  if (bias) bias = ensure_4d(*bias, src);
  if (mask) mask = ensure_4d(*mask, src);
  const int64_t B = q.shape()[0], T = q.shape()[1], N = q.shape()[2], H = q.shape()[3];
  const int64_t K = k.shape()[2];
  if (k.shape() != v.shape() || k.shape()[0] != B || k.shape()[3] != H || K == 0 || N % K != 0)
    throw_type_error(src,
                     fmt::format("dot_product_attention: query {}, key {} and value {} must "
                                 "be [B, T, N, H], [B, S, K, H] and [B, S, K, H] with K "
                                 "dividing N",
                                 q.aval().str_short(), k.aval().str_short(), v.aval().str_short()));
  if (mask && mask->dtype() != DType::bool_)
    throw_type_error(src, "dot_product_attention: the mask must be boolean");
  const int64_t G = N / K;
  const double scale_value = scale.value_or(1.0 / std::sqrt(static_cast<double>(H)));
  const Array grouped = jnp::reshape(q, {B, T, K, G, H}, src);
  std::optional<Array> grouped_bias, grouped_mask;
  if (bias) grouped_bias = to_grouped(*bias, K, G, N, src);
  if (mask) grouped_mask = to_grouped(*mask, K, G, N, src);

  // _dot_product_attention_core for one group: [B, T, K, H] queries.
  // `extras`: the grouped bias and mask, those given, in that order.
  auto core = [=](const Array& qg, const Array& kk, const Array& vv,
                  const std::vector<Array>& extras) -> Array {
    const DType logits_dtype = promote_types(qg.dtype(), DType::f32);
    Array logits = jnp::einsum("BTNH,BSNH->BNTS", {qg, kk}, src);
    logits = lax::convert_element_type(logits, logits_dtype, false, src);
    logits = jnp::multiply(logits, Array::scalar(scale_value, logits.dtype()), src);
    size_t next = 0;
    if (grouped_bias) logits = jnp::add(logits, extras[next++], src).astype(logits.dtype());
    const bool masked = grouped_mask || is_causal;
    if (masked) {
      Array combined = jnp::ones_like(logits, DType::bool_, src);
      if (grouped_mask) combined = jnp::logical_and(combined, extras[next++], src);
      if (is_causal) {
        const Shape& ls = logits.shape();
        const Array causal = jnp::tril(jnp::ones({ls[2], ls[3]}, DType::bool_, src), 0, src);
        const Array causal4 = causal[{NewAxisIndex{}, NewAxisIndex{}, Slice{}, Slice{}}];
        combined = jnp::logical_and(combined, causal4, src);
      }
      const double largest = logits.dtype() == DType::f64
                                 ? std::numeric_limits<double>::max()
                                 : static_cast<double>(std::numeric_limits<float>::max());
      const Array large_negative = Array::scalar(-0.7 * largest, logits.dtype());
      logits = jnp::where(combined, logits, large_negative, src);
    }
    const Array probs = softmax(logits.astype(DType::f32), -1, src).astype(kk.dtype());
    return jnp::einsum("BNTS,BSNH->BTNH", {probs, vv}, src);
  };
  std::vector<Array> extras;
  if (grouped_bias) extras.push_back(*grouped_bias);
  if (grouped_mask) extras.push_back(*grouped_mask);
  const Array encoded = vmap(core, {3, std::nullopt, std::nullopt, 2}, 3)(grouped, k, v, extras);
  const Array out = jnp::reshape(encoded, {B, T, N, H}, src);
  return jnp::reshape(out, output_shape, src);
}

}  // namespace cjax::nn
