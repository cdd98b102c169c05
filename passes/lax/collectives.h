// The lax library's collectives over named axes (jax/_src/lax/parallel.py): the primitives bound
// with JAX's params. An axis list is a tuple of names ('i') and positional axes (0), as JAX's
// `axes` param; make one with collective_axes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passes/lax/elementwise.h"

namespace cjax::lax_ops {

// ('i', 'j'): a tuple of axis names.
inline ParamValue collective_axes(const std::vector<std::string>& names) {
  ParamTuple t;
  for (const std::string& n : names) t.items.emplace_back(n);
  return t;
}

// The axis names of a collective's axes param (its strings), in order.
inline std::vector<std::string> axis_names_of(const ParamValue& axes) {
  std::vector<std::string> out;
  if (axes.is<std::string>()) out.push_back(axes.as<std::string>());
  if (axes.is<ParamTuple>())
    for (const ParamValue& a : axes.as<ParamTuple>().items)
      if (a.is<std::string>()) out.push_back(a.as<std::string>());
  return out;
}

// psum, pmax or pmin (`prim`) of several operands in one eqn, as JAX binds a pytree's leaves.
template <Emitter E>
std::vector<value_t<E>> all_reduce(E& e, std::string_view prim, std::vector<value_t<E>> xs,
                                   ParamValue axes) {
  return emit(e, prim, std::move(xs),
              {{"axes", std::move(axes)}, {"axis_index_groups", NoneParam{}}});
}

template <Emitter E>
value_t<E> axis_index(E& e, const std::string& axis_name) {
  return emit1(e, "axis_index", {}, {{"axis_name", axis_name}});
}

// all_gather along `axis` (a new axis unless tiled), over the named axes of total size `size`.
template <Emitter E>
value_t<E> all_gather(E& e, const value_t<E>& x, ParamValue axis_name, int64_t size, int64_t axis,
                      bool tiled) {
  return emit1(e, "all_gather", {x},
               {{"all_gather_dimension", axis},
                {"axis_index_groups", NoneParam{}},
                {"axis_name", std::move(axis_name)},
                {"axis_size", size},
                {"tiled", tiled}});
}

// psum_scatter: binds reduce_scatter.
template <Emitter E>
value_t<E> psum_scatter(E& e, const value_t<E>& x, ParamValue axis_name, int64_t size,
                        int64_t scatter_dimension, bool tiled) {
  return emit1(e, "reduce_scatter", {x},
               {{"axis_index_groups", NoneParam{}},
                {"axis_name", std::move(axis_name)},
                {"axis_size", size},
                {"scatter_dimension", scatter_dimension},
                {"tiled", tiled}});
}

}  // namespace cjax::lax_ops
