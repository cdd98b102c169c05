// The lax library's collectives over named axes (jax/_src/lax/parallel.py): the primitives bound
// with JAX's params. An axis list is a tuple of names ('i') and positional axes (0), as JAX's
// `axes` param; make one with collective_axes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/axis_env.h"
#include "passes/lax/elementwise.h"

namespace cjax::lax_ops {

// ('i', 'j'): a tuple of axis names.
inline ParamValue collective_axes(const std::vector<std::string>& names) {
  ParamTuple t;
  for (const std::string& n : names) t.items.emplace_back(n);
  return t;
}

// The axis names of a collective's axes param (its strings), in order (ir/axis_env.h).
using cjax::axis_names_of;

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

// ppermute: pairs (source, destination) of members along the named axes.
inline ParamValue perm_param(const std::vector<std::pair<int64_t, int64_t>>& perm) {
  ParamTuple t;
  for (const auto& [src, dst] : perm) t.items.push_back(ParamValue::ints({src, dst}));
  return t;
}
inline std::vector<std::pair<int64_t, int64_t>> perm_of(const ParamValue& perm) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const ParamValue& pair : perm.as<ParamTuple>().items) {
    const std::vector<int64_t> sd = pair.to_ints();
    out.emplace_back(sd.at(0), sd.at(1));
  }
  return out;
}

template <Emitter E>
value_t<E> ppermute(E& e, const value_t<E>& x, ParamValue axis_name, ParamValue perm) {
  return emit1(e, "ppermute", {x},
               {{"axis_name", std::move(axis_name)}, {"perm", std::move(perm)}});
}

// all_to_all as bound (lax.all_to_all adds the unit axis around it when not tiled).
template <Emitter E>
value_t<E> all_to_all(E& e, const value_t<E>& x, ParamValue axis_name, int64_t split_axis,
                      int64_t concat_axis, bool tiled) {
  return emit1(e, "all_to_all", {x},
               {{"axis_index_groups", NoneParam{}},
                {"axis_name", std::move(axis_name)},
                {"concat_axis", concat_axis},
                {"split_axis", split_axis},
                {"tiled", tiled}});
}

}  // namespace cjax::lax_ops
