// jnp.linspace, jnp.tril / jnp.triu and jnp.split / jnp.array_split, traced to the equations
// JAX's emit (jax/_src/numpy/lax_numpy.py: linspace, tril, triu, _split).
#include <fmt/format.h>

#include <numeric>

#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/promotion.h"

namespace cjax::numpy {
namespace {

// lax_internal._tri: row + k >= column, over the last two axes' shape.
Array tri_mask(int64_t rows, int64_t cols, int64_t k, const Loc& src) {
  const Array row = lax::broadcasted_iota(DType::i32, {rows, cols}, 0, src);
  const Array shifted = lax::add(row, Array::scalar(double(k), DType::i32), src);
  const Array col = lax::broadcasted_iota(DType::i32, {rows, cols}, 1, src);
  return lax::ge(shifted, col, src);
}

// tril keeps where the mask holds, triu (whose mask is k - 1's) where it does not.
Array triangle(const char* name, const Array& m, int64_t k, bool upper, const Loc& src) {
  if (m.ndim() < 2)
    throw TypeError(fmt::format("{}: the argument must be at least 2D, got {} ({})", name,
                                m.aval().str_short(), src.summarize()));
  auto impl = [&](std::span<const Array> args) -> std::vector<Array> {
    const Array& x = args[0];
    const Shape& s = x.shape();
    Array mask = tri_mask(s[s.size() - 2], s.back(), upper ? k - 1 : k, src);
    if (x.ndim() > 2) mask = lax::broadcast(mask, Shape(s.begin(), s.end() - 2), src);
    const Array zeros = zeros_like(x, std::nullopt, src);
    return {upper ? lax::select(mask, zeros, x, src) : lax::select(mask, x, zeros, src)};
  };
  return detail::call_jitted(name, impl, std::vector<Array>{m}, src)[0];
}

}  // namespace

Array tril(const Array& m, int64_t k, Loc src) {
  return triangle("tril", m, k, false, src);
}
Array triu(const Array& m, int64_t k, Loc src) {
  return triangle("triu", m, k, true, src);
}

std::vector<Array> split(const Array& a, int64_t sections, int64_t axis, Loc src) {
  const int64_t ax = lax::canonicalize_axis(axis, a.ndim(), "split", src);
  const int64_t size = a.shape()[size_t(ax)];
  if (sections <= 0 || size % sections != 0)
    throw TypeError(
        fmt::format("split: array split does not result in an equal division: {} "
                    "elements into {} sections ({})",
                    size, sections, src.summarize()));
  return lax::split(a, std::vector<int64_t>(size_t(sections), size / sections), ax, src);
}

std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int64_t axis,
                         Loc src) {
  const int64_t ax = lax::canonicalize_axis(axis, a.ndim(), "split", src);
  const int64_t size = a.shape()[size_t(ax)];
  std::vector<int64_t> sizes;
  int64_t prev = 0;
  for (int64_t i : indices) {
    const int64_t at = std::clamp<int64_t>(i < 0 ? i + size : i, prev, size);
    sizes.push_back(at - prev);
    prev = at;
  }
  sizes.push_back(size - prev);
  return lax::split(a, sizes, ax, src);
}

std::vector<Array> array_split(const Array& a, int64_t sections, int64_t axis, Loc src) {
  const int64_t ax = lax::canonicalize_axis(axis, a.ndim(), "array_split", src);
  if (sections <= 0)
    throw TypeError(
        fmt::format("array_split: the number of sections must be positive, got {} "
                    "({})",
                    sections, src.summarize()));
  const int64_t size = a.shape()[size_t(ax)], part = size / sections, extra = size % sections;
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < sections; ++i) sizes.push_back(part + (i < extra ? 1 : 0));
  return lax::split(a, sizes, ax, src);
}

Array linspace(const Array& start, const Array& stop, int64_t num, bool endpoint,
               std::optional<DType> dtype, int64_t axis, Loc src) {
  if (num < 0)
    throw TypeError(fmt::format("linspace: number of samples, {}, must be non-negative ({})", num,
                                src.summarize()));
  // JAX's result_type(start, stop, float): Python numbers give f32, arrays keep their float type.
  const std::vector<DTypeAndWeak> kinds{
      {start.dtype(), start.weak_type()}, {stop.dtype(), stop.weak_type()}, {DType::f32, true}};
  const DType out_dtype = dtype.value_or(to_inexact_dtype(result_type(kinds).dtype));
  const DType computation = to_inexact_dtype(out_dtype);
  auto impl = [&](std::span<const Array> args) -> std::vector<Array> {
    const Array lo = lax::convert_element_type(args[0], computation, false, src);
    const Array hi = lax::convert_element_type(args[1], computation, false, src);
    const std::vector<Shape> both{lo.shape(), hi.shape()};
    Shape bounds = detail::broadcast_shapes("linspace", both, src);
    const Array blo = broadcast_to(lo, bounds, src), bhi = broadcast_to(hi, bounds, src);
    // The samples' axis among the bounds' (numpy's `axis`, negative from the end).
    const int64_t rank = static_cast<int64_t>(bounds.size()) + 1;
    if (axis < -rank || axis >= rank)
      throw TypeError(fmt::format("linspace: axis {} is out of bounds for a result of rank {} ({})",
                                  axis, rank, src.summarize()));
    const int64_t at = axis < 0 ? axis + rank : axis;
    bounds.insert(bounds.begin() + at, 1);
    const int64_t div = endpoint ? num - 1 : num;
    Array out;
    if (num > 1) {
      const Array d = Array::scalar(double(div), computation);
      lax::div(lax::convert_element_type(lax::sub(bhi, blo, src), computation, false, src), d,
               src);  // JAX's delta (its retstep), traced as JAX traces it
      Shape iota_shape(bounds.size(), 1);
      iota_shape[size_t(at)] = div;
      const Array step = lax::div(
          lax::reshape(lax::iota(computation, div, src), iota_shape, std::nullopt, src), d, src);
      // One statement each: JAX's order of equations (C++ leaves argument order open).
      const Array lo_row = lax::reshape(blo, bounds, std::nullopt, src);
      const Array from_lo = lax::mul(lo_row, subtract(1.0, step, src), src);  // weak 1
      const Array hi_row = lax::reshape(bhi, bounds, std::nullopt, src);
      const Array from_hi = lax::mul(hi_row, step, src);
      out = lax::add(from_lo, from_hi, src);
      if (endpoint)
        out = lax::concatenate(std::vector<Array>{out, lax::expand_dims(bhi, {at}, src)}, at, src);
    } else if (num == 1) {
      out = lax::reshape(blo, bounds, std::nullopt, src);
    } else {
      bounds[size_t(at)] = 0;
      out = zeros(bounds, out_dtype, src);  // jnp.empty, in the result's dtype
    }
    // Integer results round down (a cast alone would round negative samples towards zero).
    if (is_integer(out_dtype) && !is_integer(out.dtype())) out = lax::floor(out, src);
    return {lax::convert_element_type(out, out_dtype, false, src)};
  };
  return detail::call_jitted("_linspace", impl, std::vector<Array>{start, stop}, src,
                             fmt::format("num={} endpoint={} dtype={} axis={}", num, endpoint,
                                         short_name(out_dtype), axis))[0];
}

}  // namespace cjax::numpy
