// Shape manipulation and array creation (jax/_src/numpy/lax_numpy.py, array_creation.py,
// array_methods.py).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "ir/rules/registry.h"

namespace cjax::numpy {
namespace {

// The product of the sizes in `s`, which are non-negative; a shape whose product overflows int64
// is refused rather than multiplied into undefined behaviour.
int64_t product(const Shape& s, const SourceInfo& src) {
  int64_t p = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(p, d, &p))
      throw_type_error(src,
                       fmt::format("reshape: the size of shape {} overflows int64", shape_str(s)));
  return p;
}

// array_methods._compute_newshape: at most one -1, inferred from the size.
Shape compute_newshape(const Array& a, const Shape& newshape, const SourceInfo& src) {
  int neg = -1;
  for (size_t i = 0; i < newshape.size(); ++i) {
    if (newshape[i] == -1) {
      if (neg >= 0)
        throw_type_error(src, fmt::format("reshape: can only specify one unknown axis size with "
                                          "a `-1` value, got {}",
                                          shape_str(newshape)));
      neg = static_cast<int>(i);
    } else if (newshape[i] < 0) {
      throw_type_error(src,
                       fmt::format("reshape: negative dimension in shape {}", shape_str(newshape)));
    }
  }
  int64_t size = a.size();
  if (neg >= 0) {
    Shape others = newshape;
    others.erase(others.begin() + neg);
    int64_t p = product(others, src);
    if (p == 0 || size % p != 0)
      throw_type_error(src, fmt::format("reshape: cannot reshape array of shape {} (size {}) into "
                                        "shape {} because the product of specified axis sizes "
                                        "({}) does not evenly divide {}",
                                        shape_str(a.shape()), size, shape_str(newshape), p, size));
    Shape out = newshape;
    out[neg] = size / p;
    return out;
  }
  if (int64_t p = product(newshape, src); p != size)
    throw_type_error(src, fmt::format("reshape: cannot reshape array of shape {} (size {}) into "
                                      "shape {} (size {})",
                                      shape_str(a.shape()), size, shape_str(newshape), p));
  return newshape;
}

double concrete_scalar(const Array& x, std::string_view what, const SourceInfo& src) {
  if (!x.is_concrete() || x.ndim() != 0)
    throw_type_error(src, fmt::format("arange: argument '{}' must be a concrete scalar (got {})",
                                      what, x.aval().str_short()));
  return x.item();
}

}  // namespace

Array reshape(const Array& a, const Shape& shape, Loc src) {
  return lax::reshape(a, compute_newshape(a, shape, src), std::nullopt, src);
}

Array ravel(const Array& a, Loc src) {
  return reshape(a, Shape{a.size()}, src);
}

Array transpose(const Array& a, std::optional<std::vector<int64_t>> axes, Loc src) {
  std::vector<int64_t> perm;
  if (!axes) {
    for (int64_t i = a.ndim() - 1; i >= 0; --i) perm.push_back(i);
  } else {
    for (int64_t ax : *axes) perm.push_back(lax::canonicalize_axis(ax, a.ndim(), "transpose", src));
  }
  return lax::transpose(a, perm, src);
}

Array transpose(const Array& a, std::initializer_list<int64_t> axes, Loc src) {
  return transpose(a, std::vector<int64_t>(axes), src);
}

Array matrix_transpose(const Array& a, Loc src) {
  if (a.ndim() < 2)
    throw_type_error(src, fmt::format("matrix_transpose: x must be at least two-dimensional; got "
                                      "ndim={}",
                                      a.ndim()));
  std::vector<int64_t> perm(a.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a.ndim() - 1], perm[a.ndim() - 2]);
  return lax::transpose(a, perm, src);
}

Array swapaxes(const Array& a, int64_t axis1, int64_t axis2, Loc src) {
  std::vector<int64_t> perm(a.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  int64_t i = lax::canonicalize_axis(axis1, a.ndim(), "swapaxes", src);
  int64_t j = lax::canonicalize_axis(axis2, a.ndim(), "swapaxes", src);
  std::swap(perm[i], perm[j]);
  return lax::transpose(a, perm, src);
}

Array broadcast_to(const Array& a, const Shape& shape, Loc src) {
  return lax::broadcast_to(a, shape, src);
}

Array squeeze(const Array& a, Axis axis, Loc src) {
  std::vector<int64_t> dims;
  if (axis.is_none()) {
    for (int64_t i = 0; i < a.ndim(); ++i)
      if (a.shape()[i] == 1) dims.push_back(i);
  } else {
    dims = axis.axes();
  }
  return lax::squeeze(a, dims, src);
}

Array expand_dims(const Array& a, const std::vector<int64_t>& axis, Loc src) {
  return lax::expand_dims(a, axis, src);
}

Array concatenate(const std::vector<Array>& arrays, int64_t axis, Loc src) {
  if (arrays.empty()) throw_type_error(src, "concatenate: need at least one array to concatenate");
  if (arrays[0].ndim() == 0)
    throw_type_error(src, "concatenate: zero-dimensional arrays cannot be concatenated");
  int64_t ax = lax::canonicalize_axis(axis, arrays[0].ndim(), "concatenate", src);
  std::vector<Array> promoted = detail::promote_dtypes(arrays, src);
  return lax::concatenate(promoted, ax, src);
}

Array stack(const std::vector<Array>& arrays, int64_t axis, Loc src) {
  if (arrays.empty()) throw_type_error(src, "stack: need at least one array to stack");
  std::vector<Array> promoted = detail::promote_dtypes(arrays, src);
  int64_t ax = lax::canonicalize_axis(axis, arrays[0].ndim() + 1, "stack", src);
  if (find_primitive("stack")) return bind1("stack", promoted, {{"axis", ax}}, src);
  // Without JAX's stack primitive: the equivalent expand_dims + concatenate.
  std::vector<Array> expanded;
  for (const Array& x : promoted) expanded.push_back(lax::expand_dims(x, {ax}, src));
  return lax::concatenate(expanded, ax, src);
}

Array astype(const Array& a, DType dtype, Loc src) {
  return lax::convert_element_type(a, dtype, false, src);
}

Array zeros(const Shape& shape, DType dtype, Loc src) {
  return lax::full(shape, 0, dtype, src);
}
Array ones(const Shape& shape, DType dtype, Loc src) {
  return lax::full(shape, 1, dtype, src);
}

Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype, Loc src) {
  if (fill_value.ndim() == 0) return lax::full(shape, fill_value, dtype, src);
  Array v = dtype ? astype(fill_value, *dtype, src) : fill_value;
  return lax::broadcast_to(v, shape, src);
}

Array copy(const Array& a, Loc src) {
  return cjax::bind("copy", std::vector<Array>{a}, {}, src).at(0);
}

Array zeros_like(const Array& a, std::optional<DType> dtype, Loc src) {
  return lax::full_like(a, 0, dtype, std::nullopt, src);
}
Array ones_like(const Array& a, std::optional<DType> dtype, Loc src) {
  return lax::full_like(a, 1, dtype, std::nullopt, src);
}
Array full_like(const Array& a, const Array& fill_value, std::optional<DType> dtype, Loc src) {
  if (fill_value.ndim() == 0) return lax::full_like(a, fill_value, dtype, std::nullopt, src);
  Array v = dtype ? astype(fill_value, *dtype, src) : fill_value;
  return lax::broadcast_to(v, a.shape(), src);
}

Array arange(const Array& stop, Loc src) {
  return arange(0, stop, std::nullopt, std::nullopt, src);
}

Array arange(const Array& start, const Array& stop, std::optional<Array> step,
             std::optional<DType> dtype, Loc src) {
  double start_v = concrete_scalar(start, "start", src);
  double stop_v = concrete_scalar(stop, "stop", src);
  std::vector<DTypeAndWeak> types{dtype_and_weak(start.aval()), dtype_and_weak(stop.aval())};
  if (step) types.push_back(dtype_and_weak(step->aval()));
  DType t = dtype.value_or(result_type(types).dtype);
  if (step) {
    double step_v = concrete_scalar(*step, "step", src);
    if (step_v == 0) throw_type_error(src, "arange: step must not be zero");
    DType working = t == DType::f16 || t == DType::bf16 ? DType::f32 : t;
    int64_t size =
        std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop_v - start_v) / step_v)));
    Array ramp = lax::mul(lax::convert_element_type(*step, working, false, src),
                          lax::broadcasted_iota(working, Shape{size}, 0, src), src);
    return lax::convert_element_type(
        lax::add(lax::convert_element_type(start, working, false, src), ramp, src), t, false, src);
  }
  if (start_v == 0) {
    int64_t size = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(stop_v)));
    return lax::broadcasted_iota(t, Shape{size}, 0, src);
  }
  int64_t size = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(stop_v - start_v)));
  return lax::add(lax::convert_element_type(start, t, false, src),
                  lax::broadcasted_iota(t, Shape{size}, 0, src), src);
}

}  // namespace cjax::numpy

namespace cjax {

Array Array::reshape(const Shape& shape, SourceInfo src) const {
  return numpy::reshape(*this, shape, src);
}
Array Array::T(SourceInfo src) const {
  return numpy::transpose(*this, std::nullopt, src);
}
Array Array::astype(DType t, SourceInfo src) const {
  return numpy::astype(*this, t, src);
}

}  // namespace cjax
