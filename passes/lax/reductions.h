// The lax library's reductions, cumulative reductions and sort (jax/_src/lax/lax.py,
// control_flow/loops.py).
#pragma once

#include <cstdint>
#include <vector>

#include "passes/lax/elementwise.h"

namespace cjax::lax_ops {

// Over `axes` (no keepdims); bound even over no axes.
template <Emitter E>
value_t<E> reduce_sum(E& e, const value_t<E>& x, const std::vector<int64_t>& axes) {
  return emit1(e, "reduce_sum", {x}, lax_params::reduce(axes));
}
template <Emitter E>
value_t<E> reduce_max(E& e, const value_t<E>& x, const std::vector<int64_t>& axes) {
  return emit1(e, "reduce_max", {x}, lax_params::reduce(axes));
}
template <Emitter E>
value_t<E> reduce_min(E& e, const value_t<E>& x, const std::vector<int64_t>& axes) {
  return emit1(e, "reduce_min", {x}, lax_params::reduce(axes));
}
// reduce_prod binds no out_sharding (JAX's printed jaxprs have none).
template <Emitter E>
value_t<E> reduce_prod(E& e, const value_t<E>& x, const std::vector<int64_t>& axes) {
  return emit1(e, "reduce_prod", {x}, {{"axes", ParamValue::ints(axes)}});
}

// reduce_or / reduce_and (jnp.any / jnp.all) bind only `axes`.
template <Emitter E>
value_t<E> reduce_or(E& e, const value_t<E>& x, const std::vector<int64_t>& axes) {
  return emit1(e, "reduce_or", {x}, {{"axes", ParamValue::ints(axes)}});
}
template <Emitter E>
value_t<E> reduce_and(E& e, const value_t<E>& x, const std::vector<int64_t>& axes) {
  return emit1(e, "reduce_and", {x}, {{"axes", ParamValue::ints(axes)}});
}

template <Emitter E>
value_t<E> argmax(E& e, const value_t<E>& x, int64_t axis, DType index_dtype) {
  return emit1(e, "argmax", {x}, lax_params::argminmax(axis, index_dtype));
}
template <Emitter E>
value_t<E> argmin(E& e, const value_t<E>& x, int64_t axis, DType index_dtype) {
  return emit1(e, "argmin", {x}, lax_params::argminmax(axis, index_dtype));
}

template <Emitter E>
value_t<E> cumsum(E& e, const value_t<E>& x, int64_t axis, bool reverse) {
  return emit1(e, "cumsum", {x}, lax_params::cumulative(axis, reverse));
}

// lax.sort: the operands (of one shape) sorted together along `dimension` (non-negative), ordered
// by the first num_keys of them.
template <Emitter E>
std::vector<value_t<E>> sort(E& e, std::vector<value_t<E>> operands, int64_t dimension,
                             bool is_stable, int64_t num_keys) {
  return emit(e, "sort", std::move(operands),
              {{"dimension", dimension}, {"is_stable", is_stable}, {"num_keys", num_keys}});
}

}  // namespace cjax::lax_ops
