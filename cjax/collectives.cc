#include "cjax/collectives.h"

#include <fmt/format.h>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/operators.h"
#include "cjax/trace_emitter.h"
#include "ir/axis_env.h"
#include "ir/errors.h"
#include "passes/lax/collectives.h"

namespace cjax::lax {
namespace {

int64_t bound_size(const std::string& name, const SourceInfo& src) {
  if (std::optional<int64_t> n = detail::bound_axis_size(name)) return *n;
  throw UsageError(fmt::format("{}unbound axis name: {}", location_prefix(src), name));
}

// Binds an all-reduce (psum, pmax, pmin) over the names, after checking they are bound.
Array all_reduce(std::string_view prim, const Array& x, const AxisNames& axis_name,
                 const SourceInfo& src) {
  for (const std::string& n : axis_name.names()) bound_size(n, src);
  TraceEmitter e(src);
  return lax_ops::all_reduce(e, prim, {x}, lax_ops::collective_axes(axis_name.names())).at(0);
}

}  // namespace

int64_t axis_size(const AxisNames& axis_name, SourceInfo src) {
  int64_t size = 1;
  for (const std::string& n : axis_name.names()) size *= bound_size(n, src);
  return size;
}

Array psum(const Array& x, const AxisNames& axis_name, SourceInfo src) {
  if (axis_name.names().empty()) return x;
  const Array v = x.dtype() == DType::bool_ ? convert_element_type(x, DType::i32, false, src) : x;
  const int64_t size = axis_size(axis_name, src);
  if (!v.is_tracer()) {                         // the constant case: every member holds v
    if (v.is_python_scalar() && v.weak_type())  // a C++ number stays one (JAX: a Python int)
      return is_integer(v.dtype()) ? Array(static_cast<int64_t>(v.item()) * size)
                                   : Array(v.item() * double(size));
    return mul(convert_element_type(Array(double(size)), v.dtype(), false, src), v, src);
  }
  return all_reduce("psum", v, axis_name, src);
}

Array pmax(const Array& x, const AxisNames& axis_name, SourceInfo src) {
  return all_reduce("pmax", x, axis_name, src);
}

Array pmin(const Array& x, const AxisNames& axis_name, SourceInfo src) {
  return all_reduce("pmin", x, axis_name, src);
}

Array pmean(const Array& x, const AxisNames& axis_name, SourceInfo src) {
  const Array total = psum(x, axis_name, src);
  return total / axis_size(axis_name, src);
}

Array axis_index(const std::string& axis_name, SourceInfo src) {
  bound_size(axis_name, src);
  TraceEmitter e(src);
  return lax_ops::axis_index(e, axis_name);
}

Array all_gather(const Array& x, const AxisNames& axis_name, int64_t axis, bool tiled,
                 SourceInfo src) {
  const int64_t size = axis_size(axis_name, src);
  const int64_t dim = canonicalize_axis(axis, x.ndim() + (tiled ? 0 : 1), "all_gather", src);
  TraceEmitter e(src);
  return lax_ops::all_gather(e, x, lax_ops::collective_axes(axis_name.names()), size, dim, tiled);
}

Array psum_scatter(const Array& x, const AxisNames& axis_name, int64_t scatter_dimension,
                   bool tiled, SourceInfo src) {
  const int64_t size = axis_size(axis_name, src);
  TraceEmitter e(src);
  return lax_ops::psum_scatter(e, x, lax_ops::collective_axes(axis_name.names()), size,
                               scatter_dimension, tiled);
}

Array ppermute(const Array& x, const AxisNames& axis_name,
               const std::vector<std::pair<int64_t, int64_t>>& perm, SourceInfo src) {
  const int64_t size = axis_size(axis_name, src);
  for (const auto& [from, to] : perm)
    if (from < 0 || to < 0 || from >= size || to >= size)
      throw UsageError(fmt::format("{}ppermute: the pair ({}, {}) is outside the axis of size {}",
                                   location_prefix(src), from, to, size));
  TraceEmitter e(src);
  return lax_ops::ppermute(e, x, lax_ops::collective_axes(axis_name.names()),
                           lax_ops::perm_param(perm));
}

Array all_to_all(const Array& x, const std::string& axis_name, int64_t split_axis,
                 int64_t concat_axis, bool tiled, SourceInfo src) {
  const int64_t size = bound_size(axis_name, src);
  int64_t split = canonicalize_axis(split_axis, x.ndim(), "all_to_all", src);
  int64_t concat = canonicalize_axis(concat_axis, x.ndim(), "all_to_all", src);
  const int64_t n = x.shape()[size_t(split)];
  if (tiled && n % size != 0)
    throw_type_error(src, fmt::format("all_to_all: the size of the split axis ({}) has to be "
                                      "divisible by the size of the named axis {} ({})",
                                      n, axis_name, size));
  if (!tiled && n != size)
    throw_type_error(src, fmt::format("all_to_all: the size of the mapped axis {} ({}) must "
                                      "equal the size of the split axis ({})",
                                      axis_name, size, n));
  Array y = x;
  if (!tiled && split < concat) {  // concat_axis counts positions after split_axis is removed
    ++concat;
    y = expand_dims(y, {concat}, src);
  } else if (!tiled && concat < split) {
    y = expand_dims(y, {concat}, src);
    ++split;
  }
  TraceEmitter e(src);
  Array r = lax_ops::all_to_all(e, y, axis_name, split, concat, tiled);
  return !tiled && split != concat ? squeeze(r, {split}, src) : r;
}

}  // namespace cjax::lax
