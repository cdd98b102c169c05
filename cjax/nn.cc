#include "cjax/nn.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "cjax/custom_derivatives.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/random.h"
#include "ir/errors.h"

namespace cjax::nn {

namespace {

using Unary = CustomJvp<Array, const Array&>;

// jax.nn.relu and relu6: custom_jvp functions of a jitted body, whose rule (defjvps) is
// select(where the slope is 1, g, 0), so that the derivative at the kinks is 0.
Unary activation(const char* name, Array (*body)(const Array&),
                 Array (*slope_one)(const Array&, const SourceInfo&)) {
  Unary f(
      [name, body](const Array& x) {
        Array args[] = {x};
        auto impl = [body](std::span<const Array> a) -> std::vector<Array> { return {body(a[0])}; };
        return numpy::detail::call_jitted(name, impl, args, SourceInfo{})[0];
      },
      name);
  f.defjvp(
      [f, slope_one](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
        auto [x] = primals;
        auto [g] = tangents;
        const Array ans = f(x);
        const Array where = slope_one(x, SourceInfo{});
        return std::pair{ans, lax::select(where, g, lax::full_like(g, 0))};
      },
      "jvp");
  return f;
}

const Unary& relu_fn() {
  static const Unary f = activation(
      "relu", [](const Array& x) { return numpy::maximum(x, 0); },
      [](const Array& x, const SourceInfo& src) { return numpy::greater(x, 0, src); });
  return f;
}

const Unary& relu6_fn() {
  static const Unary f = activation(
      "relu6", [](const Array& x) { return numpy::minimum(numpy::maximum(x, 0), 6.0); },
      [](const Array& x, const SourceInfo& src) {
        const Array above = numpy::greater(x, 0, src);
        const Array below = numpy::less(x, 6.0, src);
        return numpy::logical_and(above, below, src);
      });
  return f;
}

using Binary = CustomJvp<Array, const Array&, const Array&>;

// JAX's _replace_inf: +inf replaced by 0 (so that exp(x - out) is 1, not NaN, where both are inf).
Array replace_inf(const Array& x) {
  const Array inf = lax::convert_element_type(INFINITY, x.dtype(), false);
  const Array is_pos_inf = lax::eq(x, inf);  // staged before the zeros, as Python does
  const Array zeros = lax::full_like(x, 0);
  return lax::select(is_pos_inf, zeros, x);
}

// jax._src.lax.other.logaddexp: log(exp(x1) + exp(x2)) without overflow, a custom_jvp function
// whose rule (_logaddexp_jvp) stays finite at infinities.
const Binary& logaddexp_fn() {
  static const Binary f = [] {
    Binary g(
        [](const Array& x1, const Array& x2) {
          const Array amax = lax::max(x1, x2);
          const Array delta = lax::sub(x1, x2);
          const Array is_nan = lax::ne(delta, delta);
          const Array same_infinities = lax::add(x1, x2);
          const Array soft = lax::add(amax, lax::log1p(lax::exp(lax::neg(lax::abs(delta)))));
          return lax::select(is_nan, same_infinities, soft);
        },
        "logaddexp");
    g.defjvp(
        [](const std::tuple<Array, Array>& primals, const std::tuple<Array, Array>& tangents) {
          auto [x1, x2] = primals;
          auto [t1, t2] = tangents;
          const Array out = logaddexp_fn()(x1, x2);
          // Python's left-to-right order: the first term whole, then the second.
          const Array a1 = replace_inf(x1), b1 = replace_inf(out);
          const Array term1 = numpy::multiply(t1, numpy::exp(numpy::subtract(a1, b1)));
          const Array a2 = replace_inf(x2), b2 = replace_inf(out);
          const Array term2 = numpy::multiply(t2, numpy::exp(numpy::subtract(a2, b2)));
          return std::pair{out, lax::add(term1, term2)};
        },
        "_logaddexp_jvp");
    return g;
  }();
  return f;
}

}  // namespace

Array softplus(const Array& x, SourceInfo src) {
  auto impl = [src](std::span<const Array> a) -> std::vector<Array> {
    const Array zero = lax::convert_element_type(0, a[0].dtype(), false, src);
    return {logaddexp_fn()(a[0], zero, src)};
  };
  Array args[] = {x};
  return numpy::detail::call_jitted("softplus", impl, args, src)[0];
}

Array log_sigmoid(const Array& x, SourceInfo src) {
  auto impl = [src](std::span<const Array> a) -> std::vector<Array> {
    const Array negated = numpy::negative(a[0], src);
    return {numpy::negative(softplus(negated, src), src)};
  };
  Array args[] = {x};
  return numpy::detail::call_jitted("log_sigmoid", impl, args, src)[0];
}

Array relu(const Array& x, SourceInfo src) {
  return relu_fn()(x, src);
}

Array relu6(const Array& x, SourceInfo src) {
  return relu6_fn()(x, src);
}

namespace {

// jnp.max(x, axis, initial=-inf, keepdims=True), as JAX's reduction traces it: the reduce, the
// max with the initial value, then the kept axis.
Array max_keepdims(const Array& x, int64_t axis, const SourceInfo& src) {
  const Array reduced = numpy::max(x, {axis}, false, src);
  const Array initial = lax::convert_element_type(-INFINITY, x.dtype(), false, src);
  return lax::expand_dims(lax::max(initial, reduced, src), {axis}, src);
}

// x - stop_gradient(max(x, axis)): the shifted logits of softmax and log_softmax.
Array shifted_by_max(const Array& x, int64_t axis, const SourceInfo& src) {
  const Array x_max = max_keepdims(x, axis, src);
  return numpy::subtract(x, lax::stop_gradient(x_max, src), src);
}

}  // namespace

Array softmax(const Array& x, int64_t axis, SourceInfo src) {
  const int64_t a = lax::canonicalize_axis(axis, x.ndim(), "softmax", src);
  const Array unnormalized = numpy::exp(shifted_by_max(x, a, src), src);
  return numpy::divide(unnormalized, numpy::sum(unnormalized, {a}, true, std::nullopt, src), src);
}

Array log_softmax(const Array& x, int64_t axis, SourceInfo src) {
  const int64_t a = lax::canonicalize_axis(axis, x.ndim(), "log_softmax", src);
  auto impl = [a, src](std::span<const Array> args) -> std::vector<Array> {
    const Array shifted = shifted_by_max(args[0], a, src);
    const Array sum = numpy::sum(numpy::exp(shifted, src), {a}, true, std::nullopt, src);
    return {numpy::subtract(shifted, numpy::log(sum, src), src)};
  };
  Array args[] = {x};
  return numpy::detail::call_jitted("log_softmax", impl, args, src)[0];
}

Array logsumexp(const Array& x, SourceInfo src) {
  std::vector<int64_t> all(static_cast<size_t>(x.ndim()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = int64_t(i);
  const Array reduced = numpy::max(x, {}, false, src);
  const Array initial = lax::convert_element_type(-INFINITY, x.dtype(), false, src);
  const Array amax_raw = lax::max(initial, reduced, src);
  const Array finite = lax::is_finite(amax_raw, src);
  const Array amax = lax::stop_gradient(
      lax::select(finite, amax_raw, lax::full_like(amax_raw, 0, {}, {}, src), src), src);
  const Array shifted = lax::sub(x, lax::expand_dims(amax, all, src), src);
  const Array sumexp = numpy::sum(lax::exp(shifted, src), {}, false, std::nullopt, src);
  lax::sign(sumexp, src);  // JAX computes the sign (return_sign) before taking abs
  const Array total = lax::abs(sumexp, src);
  return lax::add(lax::log(total, src), amax, src);
}

Array sigmoid(const Array& x, SourceInfo src) {
  return lax::logistic(x, src);
}

Array silu(const Array& x, SourceInfo src) {
  auto impl = [src](std::span<const Array> a) -> std::vector<Array> {
    return {numpy::multiply(a[0], sigmoid(a[0], src), src)};
  };
  Array args[] = {x};
  return numpy::detail::call_jitted("silu", impl, args, src)[0];
}

Array gelu(const Array& x, bool approximate, SourceInfo src) {
  namespace np = numpy;
  Array args[] = {x};
  Array xa = np::detail::promote_args_inexact("gelu", args, src)[0];
  if (approximate) {
    // np.sqrt(2 / np.pi).astype(x.dtype): a strongly typed scalar of x's dtype.
    Array sqrt_2_over_pi = lax::convert_element_type(std::sqrt(2.0 / M_PI), xa.dtype(), false, src);
    Array cube = np::power(xa, 3, src);
    Array inner = np::add(xa, np::multiply(0.044715, cube, src), src);
    Array cdf = np::multiply(
        0.5, np::add(1.0, np::tanh(np::multiply(sqrt_2_over_pi, inner, src), src), src), src);
    return np::multiply(xa, cdf, src);
  }
  // jnp.array(0.5 * x * erfc(-x * sqrt_half), dtype=x.dtype), staged in Python's left-to-right
  // order: jnp.array of a traced value is a copy.
  Array sqrt_half = lax::convert_element_type(std::sqrt(0.5), xa.dtype(), false, src);
  Array half_x = np::multiply(0.5, xa, src);
  Array scaled = np::multiply(np::negative(xa, src), sqrt_half, src);
  Array erfc = lax::erfc(scaled, src);
  return np::copy(np::multiply(half_x, erfc, src), src);
}

Array one_hot(const Array& x, int64_t num_classes, DType dtype, int64_t axis, SourceInfo src) {
  if (num_classes < 0)
    throw TypeError(fmt::format("one_hot: num_classes must be non-negative, got {} ({})",
                                num_classes, src.summarize()));
  const int64_t out_axis = lax::canonicalize_axis(axis, x.ndim() + 1, "one_hot", src);
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    const Array& ids = args[0];
    const Array lhs = lax::expand_dims(ids, {out_axis}, src);
    Shape rhs_shape(size_t(ids.ndim()), 1);
    rhs_shape.insert(rhs_shape.begin() + out_axis, num_classes);
    const Array classes = lax::broadcasted_iota(ids.dtype(), rhs_shape, out_axis, src);
    return {lax::convert_element_type(lax::eq(lhs, classes, src), dtype, false, src)};
  };
  return numpy::detail::call_jitted("_one_hot", impl, std::vector<Array>{x}, src)[0];
}

Array dropout(const Array& key, double rate, const Array& x, SourceInfo src) {
  if (!(rate >= 0.0 && rate <= 1.0))
    throw TypeError(
        fmt::format("dropout: rate must be in [0, 1], got {} ({})", rate, src.summarize()));
  if (!is_floating(x.dtype()))
    throw TypeError(fmt::format("dropout: x must be floating point, got {} ({})",
                                x.aval().str_short(), src.summarize()));
  if (rate == 0.0) return x;
  if (rate == 1.0) return numpy::zeros_like(x, std::nullopt, src);
  const double keep = 1.0 - rate;
  const Array mask = random::bernoulli(key, keep, x.shape(), src);
  return numpy::where(mask, numpy::divide(x, keep, src), 0.0, src);
}

}  // namespace cjax::nn
