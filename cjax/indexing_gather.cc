// NumPy's advanced indexing through gather and scatter (jax/_src/numpy/indexing.py:
// _index_to_gather, _gather; jax/_src/ops/scatter.py: _scatter_impl): integer arrays broadcast
// together and index their axes at once; slices, scalar indices and newaxis around them become
// the gather's offset, collapsed and new dims. Also `Array::at` and jnp.take / take_along_axis.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "cjax/bind.h"
#include "cjax/index_update.h"
#include "cjax/indexing_internal.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "ir/errors.h"
#include "passes/lax/gather.h"

namespace cjax::numpy {
namespace detail {
namespace {

bool is_advanced_array(const Parsed& p) {
  return p.kind == Kind::array && std::get<Array>(p.index->value()).ndim() > 0;
}

// jnp.asarray(i): a C++ int becomes a weak i32 array (not a C++ number, which lax would fold).
Array as_index_array(const Parsed& p) {
  if (p.kind == Kind::array) return std::get<Array>(p.index->value());
  return Array::from_buffer(Array(std::get<int64_t>(p.index->value())).buffer(), true);
}

// JAX's _normalize_index for an array: negative entries count from the end (unsigned ones
// cannot be negative).
Array normalize_index(const Array& i, int64_t axis_size, const SourceInfo& src) {
  if (is_unsigned_integer(i.dtype())) return i;
  const Array negative = less(i, 0, src);
  const Array size = lax::convert_element_type(Array(axis_size), i.dtype(), false, src);
  const Array shifted = lax::add(i, size, src);
  return lax::select(negative, shifted, i, src);
}

// util._broadcast_arrays: unchanged when the shapes agree, else each broadcast to the result.
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays, const SourceInfo& src) {
  std::vector<Shape> shapes;
  for (const Array& a : arrays) shapes.push_back(a.shape());
  if (std::all_of(shapes.begin(), shapes.end(), [&](const Shape& s) { return s == shapes[0]; }))
    return arrays;
  const Shape result = broadcast_shapes("indexing", shapes, src);
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(broadcast_to(a, result, src));
  return out;
}

Array i32_constant(int64_t v, const SourceInfo& src) {
  return lax::convert_element_type(Array(v), DType::i32, false, src);
}

}  // namespace

bool has_advanced_index(const std::vector<Parsed>& parsed) {
  return std::any_of(parsed.begin(), parsed.end(), is_advanced_array);
}

GatherIndexer index_to_gather(const Shape& x_shape, const std::vector<Parsed>& parsed,
                              bool normalize_indices, const SourceInfo& src) {
  const bool advanced = has_advanced_index(parsed);
  // The advanced indices (with every scalar index beside them), normalized in index order.
  std::vector<Array> advanced_indexes;
  std::vector<size_t> advanced_positions;
  std::vector<int64_t> advanced_axes;
  if (advanced) {
    for (size_t pos = 0; pos < parsed.size(); ++pos) {
      const Parsed& p = parsed[pos];
      if (p.kind != Kind::integer && p.kind != Kind::array) continue;
      Array e = as_index_array(p);
      if (normalize_indices) e = normalize_index(e, x_shape[p.axes[0]], src);
      advanced_indexes.push_back(e);
      advanced_positions.push_back(pos);
      advanced_axes.push_back(p.axes[0]);
    }
  }
  bool contiguous = true;
  for (size_t k = 1; k < advanced_positions.size(); ++k)
    contiguous = contiguous && advanced_positions[k] == advanced_positions[k - 1] + 1;

  GatherIndexer r;
  std::vector<int64_t> offset_dims, collapsed, start_index_map;
  std::vector<std::pair<Array, int64_t>> gather_indices;  // (array, its first dim)
  Shape gather_indices_shape;
  int64_t x_axis = 0, y_axis = 0, collapsed_y_axis = 0;
  for (size_t pos = 0; pos < parsed.size(); ++pos) {
    const Parsed& p = parsed[pos];
    if (advanced && ((contiguous && pos == advanced_positions[0]) || (!contiguous && pos == 0))) {
      const std::vector<Array> arrays = broadcast_arrays(advanced_indexes, src);
      const Shape shape = arrays[0].shape();
      const auto start_dim = static_cast<int64_t>(gather_indices_shape.size());
      for (const Array& a : arrays)
        gather_indices.push_back({lax::convert_element_type(a, DType::i32, false, src), start_dim});
      gather_indices_shape.insert(gather_indices_shape.end(), shape.begin(), shape.end());
      start_index_map.insert(start_index_map.end(), advanced_axes.begin(), advanced_axes.end());
      collapsed.insert(collapsed.end(), advanced_axes.begin(), advanced_axes.end());
      r.slice_shape.insert(r.slice_shape.end(), shape.begin(), shape.end());
      y_axis += static_cast<int64_t>(shape.size());
      collapsed_y_axis += static_cast<int64_t>(shape.size());
    }
    if (std::find(advanced_positions.begin(), advanced_positions.end(), pos) !=
        advanced_positions.end()) {
      ++x_axis;
      r.gather_slice_shape.push_back(1);
      continue;
    }
    switch (p.kind) {
      case Kind::integer:
      case Kind::array: {  // a scalar index
        const int64_t size = x_shape[x_axis];
        if (size == 0)
          throw_type_error(src, fmt::format("indexing: index is out of bounds for axis {} with "
                                            "size 0",
                                            x_axis));
        Array i;
        if (p.kind == Kind::integer) {
          int64_t v = std::get<int64_t>(p.index->value());
          if (normalize_indices && v < 0) v += size;
          i = i32_constant(v, src);
        } else {
          i = std::get<Array>(p.index->value());
          if (normalize_indices) i = normalize_index(i, size, src);
          i = lax::convert_element_type(i, DType::i32, false, src);
        }
        gather_indices.push_back({i, static_cast<int64_t>(gather_indices_shape.size())});
        collapsed.push_back(x_axis);
        r.gather_slice_shape.push_back(1);
        start_index_map.push_back(x_axis);
        ++x_axis;
        break;
      }
      case Kind::none:
        r.slice_shape.push_back(1);
        r.newaxis_dims.push_back(y_axis++);
        break;
      case Kind::slice: {
        const int64_t dim = x_shape[x_axis];
        int64_t start, stop, step;
        slice_indices(std::get<Slice>(p.index->value()), dim, start, stop, step, src);
        const int64_t size = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                                      : std::max<int64_t>(0, (start - stop - step - 1) / -step);
        r.slice_shape.push_back(size);
        if (step == 1) {
          if (size != dim) {
            gather_indices.push_back(
                {i32_constant(start, src), static_cast<int64_t>(gather_indices_shape.size())});
            start_index_map.push_back(x_axis);
          }
          r.gather_slice_shape.push_back(size);
          offset_dims.push_back(collapsed_y_axis);
        } else {
          const Array steps =
              lax::mul(i32_constant(step, src), lax::iota(DType::i32, size, src), src);
          Array indices = lax::add(i32_constant(start, src), steps, src);
          if (step < 0) {
            r.reversed_y_dims.push_back(collapsed_y_axis);
            indices = lax::rev(indices, {0}, src);
          }
          r.gather_slice_shape.push_back(1);
          gather_indices.push_back({indices, static_cast<int64_t>(gather_indices_shape.size())});
          start_index_map.push_back(x_axis);
          gather_indices_shape.push_back(size);
          collapsed.push_back(x_axis);
        }
        ++collapsed_y_axis;
        ++y_axis;
        ++x_axis;
        break;
      }
      case Kind::ellipsis:
        break;  // expanded by parse()
    }
  }

  if (gather_indices.empty()) {
    r.gather_indices = lax::convert_element_type(zeros({0}, DType::i32, src), DType::i32);
  } else if (gather_indices.size() == 1) {
    const Array& g = gather_indices[0].first;
    r.gather_indices = lax::expand_dims(g, {g.ndim()}, src);
  } else {
    const auto last_dim = static_cast<int64_t>(gather_indices_shape.size());
    gather_indices_shape.push_back(1);
    std::vector<Array> columns;
    for (const auto& [g, first] : gather_indices) {
      std::vector<int64_t> dims(static_cast<size_t>(g.ndim()));
      std::iota(dims.begin(), dims.end(), first);
      columns.push_back(lax::broadcast_in_dim(g, gather_indices_shape, dims, src));
    }
    r.gather_indices = lax::concatenate(columns, last_dim, src);
  }
  std::sort(collapsed.begin(), collapsed.end());
  r.dnums = {offset_dims, collapsed, start_index_map, {}, {}};
  r.unique_indices = r.indices_are_sorted = !advanced;
  return r;
}

Array gather_index(const Array& a, const std::vector<Parsed>& parsed, const SourceInfo& src) {
  return gather_with_mode(a, parsed, std::nullopt, std::nullopt, src);
}

Array gather_with_mode(const Array& a, const std::vector<Parsed>& parsed,
                       std::optional<GatherScatterMode> mode, std::optional<double> fill_value,
                       const SourceInfo& src) {
  const GatherIndexer indexer = index_to_gather(a.shape(), parsed, true, src);
  if (std::find(indexer.slice_shape.begin(), indexer.slice_shape.end(), 0) !=
      indexer.slice_shape.end())
    return lax::full_like(a, 0, std::nullopt, indexer.slice_shape, src);
  Array y = a;
  if (indexer.gather_indices.size() > 0)
    y = lax::gather(y, indexer.gather_indices, indexer.dnums, indexer.gather_slice_shape,
                    {indexer.unique_indices, indexer.indices_are_sorted, mode, fill_value}, src);
  if (!indexer.reversed_y_dims.empty()) y = lax::rev(y, indexer.reversed_y_dims, src);
  if (!indexer.newaxis_dims.empty()) y = lax::expand_dims(y, indexer.newaxis_dims, src);
  return y;
}

}  // namespace detail
}  // namespace cjax::numpy

namespace cjax::numpy {
namespace {

using namespace detail;

GatherScatterMode take_mode(std::string_view op, const std::string& mode, const SourceInfo& src) {
  if (mode == "fill") return GatherScatterMode::fill_or_drop;
  if (mode == "clip") return GatherScatterMode::clip;
  if (mode == "promise_in_bounds" || mode == "wrap") return GatherScatterMode::promise_in_bounds;
  throw_type_error(src, fmt::format("{}: mode must be one of 'fill', 'clip', 'wrap' or "
                                    "'promise_in_bounds', got '{}'",
                                    op, mode));
}

void expect_integer_indices(std::string_view op, const Array& indices, const SourceInfo& src) {
  if (!is_integer(indices.dtype()))
    throw_type_error(
        src, fmt::format("{}: indices must be integers, got {}", op, indices.aval().str_short()));
}

}  // namespace

Array take(const Array& a, const Array& indices, std::optional<int64_t> axis,
           const std::string& mode, std::optional<double> fill_value, Loc src) {
  expect_integer_indices("take", indices, src);
  const GatherScatterMode gather_mode = take_mode("take", mode, src);
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    Array x = args[0];
    Array idx = args[1];
    int64_t axis_idx = 0;
    if (axis)
      axis_idx = lax::canonicalize_axis(*axis, x.ndim(), "take", src);
    else
      x = ravel(x, src);
    const int64_t size = x.shape()[axis_idx];
    if (mode == "fill") {
      // lax.gather does not take negative indices: they wrap first.
      const Array negative = less(idx, 0, src);
      const Array shifted = add(idx, size, src);
      idx = where(negative, shifted, idx, src);
    } else if (mode == "wrap") {
      // The floor modulus (jnp.mod): rem's sign follows the dividend.
      const Array n = lax::convert_element_type(Array(size), idx.dtype(), false, src);
      const Array r = lax::rem(idx, n, src);
      const Array negative = less(r, 0, src);
      const Array shifted = lax::add(r, n, src);
      idx = lax::select(negative, shifted, r, src);
    }
    Shape slice_sizes = x.shape();
    if (size == 0) {
      if (idx.size() != 0)
        throw_type_error(src, "take: cannot do a non-empty take from an empty axis");
      return {x};
    }
    if (idx.size() == 0) {
      Shape out(x.shape().begin(), x.shape().begin() + axis_idx);
      out.insert(out.end(), idx.shape().begin(), idx.shape().end());
      out.insert(out.end(), x.shape().begin() + axis_idx + 1, x.shape().end());
      return {lax::full_like(x, 0, std::nullopt, out, src)};
    }
    slice_sizes[axis_idx] = 1;
    const int64_t index_dims = idx.ndim();
    std::vector<int64_t> offset_dims;
    for (int64_t d = 0; d < axis_idx; ++d) offset_dims.push_back(d);
    for (int64_t d = axis_idx + index_dims; d < x.ndim() + index_dims - 1; ++d)
      offset_dims.push_back(d);
    const GatherDimensionNumbers dn{offset_dims, {axis_idx}, {axis_idx}, {}, {}};
    const Array column = lax::expand_dims(idx, {idx.ndim()}, src);
    return {lax::gather(x, column, dn, slice_sizes, {false, false, gather_mode, fill_value}, src)};
  };
  Array args[] = {a, indices};
  return detail::call_jitted("_take", impl, args, src)[0];
}

Array take_along_axis(const Array& arr, const Array& indices, std::optional<int64_t> axis,
                      const std::string& mode, std::optional<double> fill_value, Loc src) {
  expect_integer_indices("take_along_axis", indices, src);
  const GatherScatterMode gather_mode = take_mode("take_along_axis", mode, src);
  if (!axis) {
    if (indices.ndim() != 1)
      throw_type_error(src, "take_along_axis: indices must be 1-D when axis is None");
    return take_along_axis(ravel(arr, src), indices, 0, mode, fill_value, src);
  }
  if (arr.ndim() != indices.ndim())
    throw_type_error(src, fmt::format("take_along_axis: indices and arr must have the same number "
                                      "of dimensions; {} vs. {}",
                                      indices.ndim(), arr.ndim()));
  const int64_t axis_int = lax::canonicalize_axis(*axis, arr.ndim(), "take_along_axis", src);
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    Array a = args[0];
    Array idx = lax::convert_element_type(args[1], DType::i32, false, src);
    const Shape idx_shape = idx.shape();
    Shape arr_shape = a.shape();
    arr_shape[axis_int] = 1;
    const Shape shapes[] = {idx_shape, arr_shape};
    const Shape out_shape = detail::broadcast_shapes("take_along_axis", shapes, src);
    const int64_t axis_size = a.shape()[axis_int];
    if (axis_size == 0) return {zeros(out_shape, a.dtype(), src)};
    Shape gather_index_shape;
    for (int64_t i = 0; i < static_cast<int64_t>(idx_shape.size()); ++i)
      if (i == axis_int || idx_shape[i] != 1) gather_index_shape.push_back(out_shape[i]);
    gather_index_shape.push_back(1);
    std::vector<Array> gather_indices;
    std::vector<int64_t> slice_sizes, offset_dims, start_index_map, collapsed, operand_bdims,
        indices_bdims, squeezed;
    int64_t new_i = 0, j = 0;
    for (int64_t i = 0; i < a.ndim(); ++i) {
      if (i == axis_int) {
        if (mode != "promise_in_bounds") idx = normalize_index(idx, axis_size, src);
        gather_indices.push_back(lax::reshape(idx, gather_index_shape, std::nullopt, src));
        slice_sizes.push_back(1);
        start_index_map.push_back(new_i);
        collapsed.push_back(new_i);
        ++new_i;
        ++j;
      } else if (idx_shape[i] == 1) {
        offset_dims.push_back(i);
        slice_sizes.push_back(arr_shape[i]);
        ++new_i;
      } else if (arr_shape[i] == 1) {
        squeezed.push_back(i);  // broadcast: every index reads the one element
      } else {
        slice_sizes.push_back(arr_shape[i] == 0 ? 0 : 1);
        operand_bdims.push_back(new_i);
        indices_bdims.push_back(j);
        ++new_i;
        ++j;
      }
    }
    a = lax::squeeze(a, squeezed, src);
    const Array column = lax::concatenate(gather_indices, j, src);
    const GatherDimensionNumbers dn{offset_dims, collapsed, start_index_map, operand_bdims,
                                    indices_bdims};
    return {lax::gather(a, column, dn, slice_sizes, {false, false, gather_mode, fill_value}, src)};
  };
  Array args[] = {arr, indices};
  return detail::call_jitted("take_along_axis", impl, args, src)[0];
}

}  // namespace cjax::numpy

namespace cjax {

using numpy::detail::Parsed;

Array IndexUpdateRef::get(std::optional<GatherScatterMode> mode,
                          std::optional<double> fill_value) const {
  if (!mode && !fill_value) return numpy::getitem(x_, index_, src_);
  std::vector<Index> storage;
  const std::vector<Parsed> parsed = numpy::detail::parse(index_, x_.shape(), src_, storage);
  return numpy::detail::gather_with_mode(x_, parsed, mode, fill_value, src_);
}

Array IndexUpdateRef::update(std::string_view prim, const Array& y,
                             const lax::ScatterOptions& options) const {
  std::vector<Index> storage;
  const std::vector<Parsed> parsed = numpy::detail::parse(index_, x_.shape(), src_, storage);
  const numpy::detail::GatherIndexer indexer =
      numpy::detail::index_to_gather(x_.shape(), parsed, true, src_);
  if (std::find(indexer.slice_shape.begin(), indexer.slice_shape.end(), 0) !=
      indexer.slice_shape.end())
    return x_;
  const Array xy[] = {x_, y};
  std::vector<Array> promoted = numpy::detail::promote_dtypes(xy, src_);
  Array updates = numpy::broadcast_to(promoted[1], indexer.slice_shape, src_);
  if (!indexer.newaxis_dims.empty()) updates = numpy::squeeze(updates, indexer.newaxis_dims, src_);
  if (!indexer.reversed_y_dims.empty()) updates = lax::rev(updates, indexer.reversed_y_dims, src_);
  const lax::ScatterOptions o{indexer.indices_are_sorted || options.indices_are_sorted,
                              indexer.unique_indices || options.unique_indices, options.mode};
  const ScatterDimensionNumbers dn = lax_ops::scatter_of(indexer.dnums);
  Array out;
  if (prim == "scatter")
    out = lax::scatter(promoted[0], indexer.gather_indices, updates, dn, o, src_);
  else if (prim == "scatter-add")
    out = lax::scatter_add(promoted[0], indexer.gather_indices, updates, dn, o, src_);
  else if (prim == "scatter-mul")
    out = lax::scatter_mul(promoted[0], indexer.gather_indices, updates, dn, o, src_);
  else if (prim == "scatter-min")
    out = lax::scatter_min(promoted[0], indexer.gather_indices, updates, dn, o, src_);
  else
    out = lax::scatter_max(promoted[0], indexer.gather_indices, updates, dn, o, src_);
  return lax::convert_element_type(out, x_.dtype(), x_.weak_type(), src_);
}

Array IndexUpdateRef::set(const Array& y, const lax::ScatterOptions& options) const {
  return update("scatter", y, options);
}
Array IndexUpdateRef::add(const Array& y, const lax::ScatterOptions& options) const {
  return update("scatter-add", y, options);
}
Array IndexUpdateRef::multiply(const Array& y, const lax::ScatterOptions& options) const {
  return update("scatter-mul", y, options);
}
Array IndexUpdateRef::min(const Array& y, const lax::ScatterOptions& options) const {
  return update("scatter-min", y, options);
}
Array IndexUpdateRef::max(const Array& y, const lax::ScatterOptions& options) const {
  return update("scatter-max", y, options);
}

IndexUpdateRef Array::at(const IndexArgs& index) const {
  return IndexUpdateRef(*this, index.indices(), index.src());
}

}  // namespace cjax
