// The lax library's shape ops (jax/_src/lax/lax.py), with lax's early returns: each returns an
// Array operand unchanged where JAX's does (a reshape to the same shape, a transpose by the
// identity, ...), while a host constant is bound (JAX's `isinstance(operand, Array)` test).
// Axes are non-negative and valid here: the front end checks the caller's (cjax/lax.cc), naming
// the caller's source location.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "passes/lax/elementwise.h"

namespace cjax::lax_ops {

// lax.broadcast_in_dim: an Array is returned as it is when there is nothing to broadcast (no
// broadcast dims, the rank asked for); a same-shape broadcast of anything else is forwarded by
// the emitter's bind.
template <Emitter E>
value_t<E> broadcast_in_dim(E& e, const value_t<E>& x, const Shape& shape,
                            const std::vector<int64_t>& broadcast_dimensions) {
  if (x.aval().rank() == int64_t(shape.size()) && broadcast_dimensions.empty() && e.is_array(x))
    return x;
  return emit1(e, "broadcast_in_dim", {x},
               lax_params::broadcast_in_dim(shape, broadcast_dimensions));
}

// lax.broadcast: new leading dims of the given sizes.
template <Emitter E>
value_t<E> broadcast(E& e, const value_t<E>& x, const Shape& sizes) {
  if (sizes.empty()) return x;
  const Shape& xs = x.aval().shape;
  std::vector<int64_t> dims(xs.size());
  std::iota(dims.begin(), dims.end(), int64_t(sizes.size()));
  Shape shape = sizes;
  shape.insert(shape.end(), xs.begin(), xs.end());
  return broadcast_in_dim(e, x, shape, dims);
}

// lax.broadcast_to_rank: leading dims of size 1 up to `rank`.
template <Emitter E>
value_t<E> broadcast_to_rank(E& e, const value_t<E>& x, int64_t rank) {
  if (x.aval().rank() == rank) return x;
  return broadcast(e, x, Shape(size_t(rank - x.aval().rank()), 1));
}

// lax.reshape; `dimensions` transposes first (bound as None when it is the identity).
template <Emitter E>
value_t<E> reshape(E& e, const value_t<E>& x, const Shape& new_sizes,
                   const std::optional<std::vector<int64_t>>& dimensions = std::nullopt) {
  const Shape& shape = x.aval().shape;
  bool same_dims = true;
  if (dimensions) {
    same_dims = dimensions->size() == shape.size();
    for (size_t i = 0; same_dims && i < dimensions->size(); ++i)
      same_dims = (*dimensions)[i] == int64_t(i);
  }
  if (!shape.empty() && shape == new_sizes && same_dims && e.is_array(x)) return x;
  Params p = lax_params::reshape(new_sizes);
  if (dimensions && !same_dims) p.set("dimensions", ParamValue::ints(*dimensions));
  return emit1(e, "reshape", {x}, std::move(p));
}

template <Emitter E>
value_t<E> transpose(E& e, const value_t<E>& x, const std::vector<int64_t>& permutation) {
  bool identity = int64_t(permutation.size()) == x.aval().rank();
  for (size_t i = 0; identity && i < permutation.size(); ++i)
    identity = permutation[i] == int64_t(i);
  if (identity && e.is_array(x)) return x;
  return emit1(e, "transpose", {x}, lax_params::transpose(permutation));
}

template <Emitter E>
value_t<E> squeeze(E& e, const value_t<E>& x, std::vector<int64_t> dimensions) {
  std::sort(dimensions.begin(), dimensions.end());
  if (dimensions.empty() && e.is_array(x)) return x;
  return emit1(e, "squeeze", {x}, lax_params::squeeze(dimensions));
}

// lax.expand_dims (distinct dimensions of the result): a broadcast_in_dim, as JAX traces it.
template <Emitter E>
value_t<E> expand_dims(E& e, const value_t<E>& x, std::vector<int64_t> dimensions) {
  std::sort(dimensions.begin(), dimensions.end());
  Shape shape = x.aval().shape;
  for (int64_t d : dimensions) shape.insert(shape.begin() + d, 1);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (!std::binary_search(dimensions.begin(), dimensions.end(), i)) kept.push_back(i);
  return broadcast_in_dim(e, x, shape, kept);
}

// At least one operand.
template <Emitter E>
value_t<E> concatenate(E& e, const std::vector<value_t<E>>& xs, int64_t dimension) {
  if (xs.size() == 1 && e.is_array(xs[0])) return xs[0];
  return emit1(e, "concatenate", xs, lax_params::concatenate(dimension));
}

struct PadDim {
  int64_t lo, hi, interior;
};
template <Emitter E>
value_t<E> pad(E& e, const value_t<E>& x, const value_t<E>& padding_value,
               const std::vector<PadDim>& config) {
  std::vector<std::vector<int64_t>> rows;
  for (const PadDim& d : config) rows.push_back({d.lo, d.hi, d.interior});
  return emit1(e, "pad", {x, padding_value}, lax_params::pad(rows));
}

template <Emitter E>
value_t<E> rev(E& e, const value_t<E>& x, const std::vector<int64_t>& dimensions) {
  return emit1(e, "rev", {x}, {{"dimensions", ParamValue::ints(dimensions)}});
}

template <Emitter E>
value_t<E> broadcasted_iota(E& e, DType dtype, const Shape& shape, int64_t dimension) {
  return emit1(e, "iota", {}, lax_params::iota(dtype, shape, dimension));
}
template <Emitter E>
value_t<E> iota(E& e, DType dtype, int64_t size) {
  return broadcasted_iota(e, dtype, Shape{size}, 0);
}

// --- fills --------------------------------------------------------------------------------------

// lax.full: the scalar fill value, converted to `dtype` when given (else kept with its weak
// type), broadcast to `shape`.
template <Emitter E>
value_t<E> full(E& e, const Shape& shape, const value_t<E>& fill_value,
                std::optional<DType> dtype = std::nullopt) {
  bool weak = dtype ? false : fill_value.aval().weak_type;
  value_t<E> fill =
      convert_element_type(e, fill_value, dtype.value_or(fill_value.aval().dtype), weak);
  return broadcast(e, fill, shape);
}
// lax.full(shape, v, dtype) with a C++ number.
template <Emitter E>
value_t<E> full(E& e, const Shape& shape, double v, DType dtype) {
  return full(e, shape, e.literal(v, dtype, false), dtype);
}

// lax.full_like(x, fill_value, dtype, shape): x's dtype (and weak type) unless `dtype` is given,
// x's shape unless `shape` is.
template <Emitter E>
value_t<E> full_like(E& e, const value_t<E>& x, const value_t<E>& fill_value,
                     std::optional<DType> dtype = std::nullopt,
                     std::optional<Shape> shape = std::nullopt) {
  bool weak = !dtype && x.aval().weak_type;
  value_t<E> fill = convert_element_type(e, fill_value, dtype.value_or(x.aval().dtype), weak);
  return full(e, shape.value_or(x.aval().shape), fill);
}
// full_like(x, v) and full_like(x, v, shape=shape) with a C++ number.
template <Emitter E>
value_t<E> full_like(E& e, const value_t<E>& x, double v) {
  return full_like(e, x, e.literal(v, x.aval().dtype, x.aval().weak_type));
}
template <Emitter E>
value_t<E> full_like(E& e, const value_t<E>& x, double v, const Shape& shape) {
  return full_like(e, x, e.literal(v, x.aval().dtype, x.aval().weak_type), std::nullopt, shape);
}

// JAX's zeros_like_aval (instantiated symbolic zeros): zeros of the aval's dtype and weak type.
template <Emitter E>
value_t<E> zeros_like_aval(E& e, const ShapedArray& aval) {
  return broadcast(e, e.literal(0.0, aval.dtype, aval.weak_type), aval.shape);
}

}  // namespace cjax::lax_ops
