// The lax library's slicing ops (jax/_src/lax/slicing.py).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "passes/lax/elementwise.h"

namespace cjax::lax_ops {

// lax.slice; `strides` None unless given.
template <Emitter E>
value_t<E> slice(E& e, const value_t<E>& x, const Shape& start_indices, const Shape& limit_indices,
                 const std::optional<std::vector<int64_t>>& strides = std::nullopt) {
  Params p = lax_params::slice(start_indices, limit_indices);
  if (strides) p.set("strides", ParamValue::ints(*strides));
  return emit1(e, "slice", {x}, std::move(p));
}

// dynamic_slice_p.bind: the start indices as given (the front end's lax::dynamic_slice first
// normalises negative ones, as JAX's _dynamic_slice_indices does).
template <Emitter E>
value_t<E> dynamic_slice(E& e, const value_t<E>& x, const std::vector<value_t<E>>& start_indices,
                         const Shape& slice_sizes) {
  std::vector<value_t<E>> in{x};
  in.insert(in.end(), start_indices.begin(), start_indices.end());
  return emit1(e, "dynamic_slice", std::move(in), lax_params::dynamic_slice(slice_sizes));
}

// dynamic_update_slice_p.bind.
template <Emitter E>
value_t<E> dynamic_update_slice(E& e, const value_t<E>& x, const value_t<E>& update,
                                const std::vector<value_t<E>>& start_indices) {
  std::vector<value_t<E>> in{x, update};
  in.insert(in.end(), start_indices.begin(), start_indices.end());
  return emit1(e, "dynamic_update_slice", std::move(in));
}

}  // namespace cjax::lax_ops
