// jax.random's samplers beyond uniform and normal: each traces to what JAX's does (its jitted
// helpers `_bernoulli`, `_truncated_normal`, `_randint`, `_gumbel`, `_shuffle`), so the values
// are JAX's for the same key. Where JAX permutes an array's rows by a gather, a sort by
// the same keys gives the same permutation.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/random.h"
#include "cjax/random_internal.h"
#include "ir/errors.h"

namespace cjax::random {
using namespace detail;
namespace np = cjax::numpy;

namespace {

[[noreturn]] void fail(const SourceInfo& src, const std::string& msg) {
  throw TypeError(fmt::format("{} ({})", msg, src.summarize()));
}

// JAX's _check_shape: the parameters' shapes must broadcast to `shape` without growing it.
void check_shape(const char* fn, const Shape& shape, std::initializer_list<Shape> params,
                 const SourceInfo& src) {
  std::vector<Shape> all{shape};
  all.insert(all.end(), params.begin(), params.end());
  const Shape joint = np::detail::broadcast_shapes(fn, all, src);
  if (joint != shape) {
    std::string got;
    for (const Shape& s : params) got += (got.empty() ? "" : ", ") + shape_str(s);
    fail(src, fmt::format("{} parameter shapes must be broadcast-compatible with shape argument, "
                          "and the result of broadcasting the shapes must equal the shape "
                          "argument, but got result {} for shape argument {} and parameter "
                          "shapes {}.",
                          fn, shape_str(joint), shape_str(shape), got));
  }
}

int64_t num_elements(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

// The smallest and largest values of an integer dtype, as doubles (exact up to 2^53; the 64-bit
// bounds round, which only widens a clip that cannot bind).
std::pair<double, double> int_range(DType t) {
  const int bits = int(itemsize(t) * 8);
  if (is_unsigned_integer(t)) return {0.0, std::ldexp(1.0, bits) - 1.0};
  return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1.0};
}

// JAX's _convert_and_clip_integer: clip to what both dtypes hold, then convert.
Array convert_and_clip_integer(const Array& val, DType dtype, const SourceInfo& src) {
  const auto [dlo, dhi] = int_range(dtype);
  const auto [vlo, vhi] = int_range(val.dtype());
  const Array lo = constant(std::max(dlo, vlo), val.dtype(), src);
  const Array hi = constant(std::min(dhi, vhi), val.dtype(), src);
  return np::astype(np::clip(val, lo, hi, src), dtype, src);
}

DType unsigned_of(int nbits) {
  switch (nbits) {
    case 8:
      return DType::u8;
    case 16:
      return DType::u16;
    case 32:
      return DType::u32;
    default:
      return DType::u64;
  }
}

// The indices of the k largest entries along the last axis, largest first and, among equals,
// the lower index first (lax.top_k's order): a stable sort of the negated values with an iota.
Array top_k_indices(const Array& x, int64_t k, const SourceInfo& src) {
  const int64_t last = x.ndim() - 1;
  const Array idx = lax::broadcasted_iota(DType::i32, x.shape(), last, src);
  const Array sorted = lax::sort({np::negative(x, src), idx}, last, true, 1, src)[1];
  std::vector<int64_t> start(size_t(x.ndim()), 0), limit(x.shape().begin(), x.shape().end());
  limit.back() = k;
  return lax::slice(sorted, start, limit, std::nullopt, src);
}

// JAX's _shuffle rounds: how many sorts by fresh 32-bit keys make collisions negligible.
int shuffle_rounds(int64_t size) {
  const double exponent = 3.0, uint32max = 4294967295.0;
  return int(
      std::ceil(exponent * std::log(double(std::max<int64_t>(1, size))) / std::log(uint32max)));
}

// JAX's _shuffle (jitted, axis static): x sorted along `axis` by fresh random keys, once per
// round. `keys_shape` is the shape the keys are drawn in; they are broadcast to x's shape along
// the other axes, which permutes whole slices alike (JAX's gather of a shuffled arange).
Array shuffle_by_sort(const Array& key, const Array& x, int64_t axis, const Shape& keys_shape,
                      int rounds, const SourceInfo& src) {
  Array k = key, out = x;
  for (int r = 0; r < rounds; ++r) {
    auto [next, sub] = split2(k, src);
    k = next;
    Array sort_keys = random_bits(sub, 32, keys_shape, src);
    if (keys_shape != x.shape())
      sort_keys = lax::broadcast_in_dim(sort_keys, x.shape(), {axis}, src);
    out = lax::sort({sort_keys, out}, axis, true, 1, src)[1];
  }
  return out;
}

Array shuffle(const Array& key, const Array& x, int64_t axis, const SourceInfo& src) {
  auto body = [&](std::span<const Array> a) {
    return shuffle_by_sort(a[0], a[1], axis, a[1].shape(), shuffle_rounds(a[1].size()), src);
  };
  return jitted("_shuffle", body, {key, x}, src);
}

}  // namespace

Array bernoulli(const Array& key, const Array& p, std::optional<Shape> shape, SourceInfo src) {
  const Array k = single_key("bernoulli", key, src);
  const DType dtype = p.dtype();
  if (!is_floating(dtype))
    fail(src, fmt::format("bernoulli probability `p` must have a floating dtype, got {}.",
                          long_name(dtype)));
  const Array prob = lax::convert_element_type(p, dtype, false, src);
  auto body = [&](std::span<const Array> a) {
    const Shape s = shape.value_or(a[1].shape());
    check_shape("bernoulli", s, {a[1].shape()}, src);
    return np::less(uniform(a[0], s, dtype, 0.0, 1.0, src), a[1], src);
  };
  return jitted("_bernoulli", body, {k, prob}, src);
}

Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       std::optional<Shape> shape, DType dtype, SourceInfo src) {
  const Array k = single_key("truncated_normal", key, src);
  if (!is_floating(dtype))
    fail(src, fmt::format("dtype argument to `truncated_normal` must be a float dtype, got {}",
                          long_name(dtype)));
  auto body = [&](std::span<const Array> a) {
    Shape s;
    if (shape) {
      s = *shape;
      check_shape("truncated_normal", s, {a[1].shape(), a[2].shape()}, src);
    } else {
      const std::vector<Shape> both{a[1].shape(), a[2].shape()};
      s = np::detail::broadcast_shapes("truncated_normal", both, src);
    }
    const Array sqrt2 = constant(std::sqrt(2.0), dtype, src);
    const Array lo = lax::convert_element_type(a[1], dtype, false, src);
    const Array hi = lax::convert_element_type(a[2], dtype, false, src);
    const Array ea = lax::erf(np::divide(lo, sqrt2, src), src);
    const Array eb = lax::erf(np::divide(hi, sqrt2, src), src);
    const Array u = uniform(a[0], s, dtype, ea, eb, src);
    const Array out = np::multiply(sqrt2, lax::erf_inv(u, src), src);
    // Clamped to the open interval (lower, upper): rounding may reach a bound.
    const double inf = std::numeric_limits<double>::infinity();
    return np::clip(
        out, lax::nextafter(lax::stop_gradient(lo, src), constant(inf, dtype, src), src),
        lax::nextafter(lax::stop_gradient(hi, src), constant(-inf, dtype, src), src), src);
  };
  return jitted("_truncated_normal", body, {k, lower, upper}, src);
}

Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype, SourceInfo src) {
  const Array k = single_key("randint", key, src);
  if (!is_integer(dtype) || dtype == DType::bool_)
    fail(src, fmt::format("randint only accepts integer dtypes, got {}", long_name(dtype)));
  // 8- and 16-bit values are drawn in 32 bits (less bias), bounds clipped to the dtype's range.
  DType sampling = dtype;
  Array lo = minval, hi = maxval;
  if (itemsize(dtype) < 4) {
    sampling = DType::i32;
    const auto [dlo, dhi] = int_range(dtype);
    lo = np::clip(np::astype(lo, DType::i32, src), Array(dlo), Array(dhi), src);
    hi = np::clip(np::astype(hi, DType::i32, src), Array(dlo), Array(dhi + 1), src);
  }
  auto body = [&](std::span<const Array> a) {
    check_shape("randint", shape, {a[1].shape(), a[2].shape()}, src);
    Array mn = is_integer(a[1].dtype()) ? a[1] : np::astype(a[1], DType::i32, src);
    Array mx = is_integer(a[2].dtype()) ? a[2] : np::astype(a[2], DType::i32, src);
    // randint(key, shape, 0, 256, uint8): a maxval past the dtype's range widens the span by one.
    const Array dtype_max = convert_and_clip_integer(
        constant(int_range(sampling).second, sampling, src), mx.dtype(), src);
    const Array max_out_of_range = lax::gt(mx, dtype_max, src);
    mn = lax::broadcast_to_rank(convert_and_clip_integer(mn, sampling, src), int64_t(shape.size()),
                                src);
    mx = lax::broadcast_to_rank(convert_and_clip_integer(mx, sampling, src), int64_t(shape.size()),
                                src);
    const int nbits = int(itemsize(sampling) * 8);
    // Twice the dtype's bits per value, reduced modulo the span: less bias than one draw.
    auto [k1, k2] = split2(a[0], src);
    const Array higher = random_bits(k1, nbits, shape, src);
    const Array lower = random_bits(k2, nbits, shape, src);
    const DType unsigned_dtype = unsigned_of(nbits);
    Array span = lax::convert_element_type(np::subtract(mx, mn, src), unsigned_dtype, false, src);
    span = lax::select(np::less_equal(mx, mn, src),
                       lax::full_like(span, 1, std::nullopt, std::nullopt, src), span, src);
    span = lax::select(np::logical_and(max_out_of_range, np::greater(mx, mn, src), src),
                       lax::add(span, constant(1, unsigned_dtype, src), src), span, src);
    // (2^nbits mod span) as ((2^(nbits/2) mod span)^2 mod span), which cannot overflow.
    Array multiplier =
        lax::rem(constant(std::ldexp(1.0, nbits / 2), unsigned_dtype, src), span, src);
    multiplier = lax::rem(lax::mul(multiplier, multiplier, src), span, src);
    Array offset = lax::add(lax::mul(lax::rem(higher, span, src), multiplier, src),
                            lax::rem(lower, span, src), src);
    offset = lax::rem(offset, span, src);
    return lax::add(mn, lax::convert_element_type(offset, sampling, false, src), src);
  };
  const Array out = jitted("_randint", body, {k, lo, hi}, src);
  return out.dtype() == dtype ? out : np::astype(out, dtype, src);
}

Array gumbel(const Array& key, const Shape& shape, DType dtype, SourceInfo src) {
  const Array k = single_key("gumbel", key, src);
  if (!is_floating(dtype))
    fail(src,
         fmt::format("dtype argument to `gumbel` must be a float dtype, got {}", long_name(dtype)));
  const double tiny = dtype == DType::f64   ? std::numeric_limits<double>::min()
                      : dtype == DType::f32 ? double(std::numeric_limits<float>::min())
                      : dtype == DType::f16 ? std::ldexp(1.0, -14)
                                            : double(std::numeric_limits<float>::min());
  auto body = [&](std::span<const Array> a) {
    const Array u = uniform(a[0], shape, dtype, Array(tiny), 1.0, src);
    return np::negative(np::log(np::negative(np::log(u, src), src), src), src);
  };
  return jitted("_gumbel", body, {k}, src);
}

Array categorical(const Array& key, const Array& logits, int64_t axis, std::optional<Shape> shape,
                  bool replace, SourceInfo src) {
  const Array k = single_key("categorical", key, src);
  const int64_t nd = logits.ndim();
  if (nd == 0) fail(src, "categorical: logits must have at least one axis");
  const int64_t ax = lax::canonicalize_axis(axis, nd, "categorical", src);
  Shape batch = logits.shape();
  batch.erase(batch.begin() + ax);
  const Shape s = shape.value_or(batch);
  if (s.size() < batch.size()) check_shape("categorical", s, {batch}, src);
  check_shape("categorical", Shape(s.end() - int64_t(batch.size()), s.end()), {batch}, src);
  const Shape prefix(s.begin(), s.end() - int64_t(batch.size()));
  if (replace) {
    Shape gshape(s.end() - int64_t(batch.size()), s.end());
    gshape.insert(gshape.begin() + ax, logits.shape()[size_t(ax)]);
    gshape.insert(gshape.begin(), prefix.begin(), prefix.end());
    std::vector<int64_t> lead(prefix.size());
    std::iota(lead.begin(), lead.end(), 0);
    const Array g = gumbel(k, gshape, logits.dtype(), src);
    const Array scores =
        np::add(g, lead.empty() ? logits : lax::expand_dims(logits, lead, src), src);
    return np::argmax(scores, ax - nd, false, src);
  }
  // Without replacement: the Gumbel top-k trick, the prefix's size of draws per distribution.
  const int64_t draws = num_elements(prefix);
  if (draws > logits.shape()[size_t(ax)])
    fail(src, fmt::format("Number of samples without replacement ({}) cannot exceed number of "
                          "categories ({}).",
                          draws, logits.shape()[size_t(ax)]));
  const Array perturbed = np::add(logits, gumbel(k, logits.shape(), logits.dtype(), src), src);
  std::vector<int64_t> to_last(static_cast<size_t>(nd));
  std::iota(to_last.begin(), to_last.end(), 0);
  to_last.erase(to_last.begin() + ax);
  to_last.push_back(ax);
  const Array indices = top_k_indices(np::transpose(perturbed, to_last, src), draws, src);
  // batch + (k,) -> (k,) + batch -> shape.
  std::vector<int64_t> k_first{indices.ndim() - 1};
  for (int64_t i = 0; i + 1 < indices.ndim(); ++i) k_first.push_back(i);
  return lax::reshape(indices, s, k_first, src);
}

Array permutation(const Array& key, int64_t n, SourceInfo src) {
  const Array k = single_key("permutation", key, src);
  if (n < 0) fail(src, fmt::format("permutation: n must be non-negative, got {}", n));
  return shuffle(k, np::arange(Array(n), src), 0, src);
}

Array permutation(const Array& key, const Array& x, int64_t axis, bool independent,
                  SourceInfo src) {
  if (x.ndim() == 0) {
    if (!is_integer(x.dtype()) || !x.is_concrete())
      fail(src, "permutation: x must be a concrete integer or at least 1-dimensional");
    return permutation(key, x.item<int64_t>(src), src);
  }
  const Array k = single_key("permutation", key, src);
  const int64_t ax = lax::canonicalize_axis(axis, x.ndim(), "permutation", src);
  if (independent || x.ndim() == 1) return shuffle(k, x, ax, src);
  // JAX gathers the rows of a shuffled arange; sorting the rows by the same keys is the same
  // permutation.
  const int64_t n = x.shape()[size_t(ax)];
  return shuffle_by_sort(k, x, ax, Shape{n}, shuffle_rounds(n), src);
}

namespace {

// choice's result, reshaped as JAX's: `shape` for a range, the axis replaced for an array.
Array choice_result(const Array& picked, const Array& a, const Shape& shape, int64_t axis,
                    const SourceInfo& src) {
  if (a.ndim() == 0) return lax::reshape(picked, shape, std::nullopt, src);
  Shape out(a.shape().begin(), a.shape().begin() + axis);
  out.insert(out.end(), shape.begin(), shape.end());
  out.insert(out.end(), a.shape().begin() + axis + 1, a.shape().end());
  return lax::reshape(picked, out, std::nullopt, src);
}

}  // namespace

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             std::optional<Array> p, int64_t axis, SourceInfo src) {
  const Array k = single_key("choice", key, src);
  int64_t n_inputs = 0;
  if (a.ndim() == 0) {
    if (!is_integer(a.dtype()) || !a.is_concrete())
      fail(src, "choice: a must be a concrete integer or an array");
    n_inputs = a.item<int64_t>(src);
  } else {
    axis = lax::canonicalize_axis(axis, a.ndim(), "choice", src);
    n_inputs = a.shape()[size_t(axis)];
  }
  const int64_t n_draws = num_elements(shape);
  const DType out_dtype = a.ndim() == 0 ? DType::i32 : a.dtype();
  if (n_draws == 0) return np::zeros(shape, out_dtype, src);
  if (n_inputs <= 0) fail(src, "a must be greater than 0 unless no samples are taken");
  if (!replace && n_draws > n_inputs)
    fail(src, fmt::format("Cannot take a larger sample (size {}) than population (size {}) when "
                          "'replace=False'",
                          n_draws, n_inputs));
  // The drawn indices, or the array's elements at them (jnp.take along the axis).
  auto picked = [&](const Array& ind) {
    return choice_result(a.ndim() == 0 ? ind : np::take(a, ind, axis, "fill", std::nullopt, src), a,
                         shape, axis, src);
  };
  if (!p) {
    if (replace) return picked(randint(k, shape, 0, n_inputs, DType::i32, src));
    const Array perm =
        a.ndim() == 0 ? permutation(k, n_inputs, src) : permutation(k, a, axis, false, src);
    std::vector<int64_t> start(size_t(perm.ndim()), 0),
        limit(perm.shape().begin(), perm.shape().end());
    limit[size_t(a.ndim() == 0 ? 0 : axis)] = n_draws;
    return choice_result(lax::slice(perm, start, limit, std::nullopt, src), a, shape, axis, src);
  }
  const Array probs = np::detail::promote_args_inexact("choice", std::vector<Array>{*p}, src)[0];
  if (probs.shape() != Shape{n_inputs})
    fail(src, fmt::format("p must be None or a 1D vector with the same size as a.shape[axis]. p "
                          "has shape {} and a.shape[axis] is {}.",
                          shape_str(probs.shape()), n_inputs));
  if (replace) {
    // Inverse-CDF sampling: the first cumulative probability above a uniform (searchsorted).
    const Array cdf = lax::cumsum(probs, 0, false, src);
    const Array total =
        lax::squeeze(lax::slice(cdf, {n_inputs - 1}, {n_inputs}, std::nullopt, src), {0}, src);
    const Array r = np::multiply(
        total, np::subtract(1.0, uniform(k, shape, probs.dtype(), 0.0, 1.0, src), src), src);
    Shape grid = shape;
    grid.push_back(n_inputs);
    std::vector<int64_t> last{int64_t(shape.size())}, lead(shape.size());
    std::iota(lead.begin(), lead.end(), 0);
    const Array below = lax::lt(lax::broadcast_in_dim(cdf, grid, last, src),
                                lax::broadcast_in_dim(r, grid, lead, src), src);
    const Array ind =
        lax::reduce_sum(lax::convert_element_type(below, DType::i32, false, src), last, src);
    return picked(ind);
  }
  const Array g = np::add(gumbel(k, {n_inputs}, probs.dtype(), src), np::log(probs, src), src);
  return picked(top_k_indices(g, n_draws, src));
}

}  // namespace cjax::random
