// NumPy indexing x[...] (jax/_src/numpy/indexing.py): static indices become slice / squeeze /
// expand_dims; scalar integer Array indices become dynamic_slice; integer arrays of rank > 0 go
// through gather (indexing_gather.cc). Boolean masks, and negative slice steps outside a gather,
// are not supported.
#include <fmt/format.h>

#include <algorithm>

#include "cjax/bind.h"
#include "cjax/indexing_internal.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"

namespace cjax::numpy {
namespace detail {

Kind kind_of(const Index& i, const SourceInfo& src) {
  const Index::Variant& v = i.value();
  if (std::holds_alternative<NewAxisIndex>(v)) return Kind::none;
  if (std::holds_alternative<EllipsisIndex>(v)) return Kind::ellipsis;
  if (std::holds_alternative<Slice>(v)) return Kind::slice;
  if (std::holds_alternative<int64_t>(v)) return Kind::integer;
  const Array& a = std::get<Array>(v);
  if (!is_integer(a.dtype()))
    throw_type_error(src, fmt::format("indexing: indexer must have integer type, got indexer with "
                                      "type {}",
                                      long_name(a.dtype())));
  return Kind::array;
}

std::vector<Parsed> parse(const std::vector<Index>& indices, const Shape& shape,
                          const SourceInfo& src, std::vector<Index>& storage) {
  std::vector<Kind> kinds;
  int64_t consumed = 0;
  int ellipses = 0;
  for (const Index& i : indices) {
    Kind k = kind_of(i, src);
    kinds.push_back(k);
    if (k == Kind::ellipsis) ++ellipses;
    if (k == Kind::slice || k == Kind::integer || k == Kind::array) ++consumed;
  }
  int64_t rank = static_cast<int64_t>(shape.size());
  if (ellipses > 1)
    throw_type_error(src, "indexing: an index can only have a single ellipsis ('...')");
  if (consumed > rank)
    throw_type_error(src, fmt::format("indexing: too many indices: array is {}-dimensional, but {} "
                                      "were indexed",
                                      rank, consumed));
  storage.assign(1, Index(Slice{}));  // the full slice used for expansions
  std::vector<Parsed> out;
  int64_t dim = 0;
  for (size_t n = 0; n < indices.size(); ++n) {
    switch (kinds[n]) {
      case Kind::none:
        out.push_back({Kind::none, &indices[n], {}});
        break;
      case Kind::ellipsis:
        for (int64_t k = 0; k < rank - consumed; ++k)
          out.push_back({Kind::slice, &storage[0], {dim++}});
        break;
      default:
        out.push_back({kinds[n], &indices[n], {dim++}});
    }
  }
  while (dim < rank) out.push_back({Kind::slice, &storage[0], {dim++}});
  return out;
}

void slice_indices(const Slice& s, int64_t size, int64_t& start, int64_t& stop, int64_t& step,
                   const SourceInfo& src) {
  step = s.step.value_or(1);
  if (step == 0) throw_type_error(src, "indexing: slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) x += size;
    if (step > 0) return std::clamp<int64_t>(x, 0, size);
    return std::clamp<int64_t>(x, -1, size - 1);
  };
  start = clamp(s.start, step > 0 ? 0 : size - 1);
  stop = clamp(s.stop, step > 0 ? size : -1);
}

}  // namespace detail

namespace {

using namespace detail;

Array static_index(const Array& a, const std::vector<Parsed>& parsed, const SourceInfo& src) {
  std::vector<int64_t> start, limit, strides, squeeze_axes, newaxis_dims;
  for (const Parsed& p : parsed) {
    if (p.kind == Kind::none) {
      newaxis_dims.push_back(
          static_cast<int64_t>(start.size() - squeeze_axes.size() + newaxis_dims.size()));
    } else if (p.kind == Kind::integer) {
      int64_t axis = p.axes[0], size = a.shape()[axis];
      int64_t i = std::get<int64_t>(p.index->value());
      int64_t normed = i < 0 ? i + size : i;
      if (normed < 0 || normed >= size)
        throw_type_error(src, fmt::format("indexing: index {} out of bounds for axis {} with size "
                                          "{}",
                                          i, axis, size));
      start.push_back(normed);
      limit.push_back(normed + 1);
      strides.push_back(1);
      squeeze_axes.push_back(axis);
    } else {
      int64_t s, e, st;
      slice_indices(std::get<Slice>(p.index->value()), a.shape()[p.axes[0]], s, e, st, src);
      if (st < 0)
        throw UnsupportedError(location_prefix(src) +
                               "indexing: negative slice steps (rev) are not supported");
      start.push_back(s);
      limit.push_back(std::max(s, e));
      strides.push_back(st);
    }
  }
  bool unit = std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
  bool trivial = unit && static_cast<int64_t>(start.size()) == a.ndim();
  for (size_t i = 0; trivial && i < start.size(); ++i)
    trivial = start[i] == 0 && limit[i] == a.shape()[i];
  Array r = a;
  if (!trivial)
    r = lax::slice(a, start, limit,
                   unit ? std::nullopt : std::optional<std::vector<int64_t>>(strides), src);
  if (!squeeze_axes.empty()) r = lax::squeeze(r, squeeze_axes, src);
  if (!newaxis_dims.empty()) r = lax::expand_dims(r, newaxis_dims, src);
  return r;
}

Array dynamic_index(const Array& a, const std::vector<Parsed>& parsed, const SourceInfo& src) {
  std::vector<Array> starts;
  std::vector<int64_t> sizes, squeeze_axes, newaxis_dims;
  bool trivial = true;
  for (const Parsed& p : parsed) {
    if (p.kind == Kind::none) {
      newaxis_dims.push_back(
          static_cast<int64_t>(starts.size() - squeeze_axes.size() + newaxis_dims.size()));
    } else if (p.kind == Kind::integer || p.kind == Kind::array) {
      trivial = false;
      // jnp.asarray(i): a Python int becomes a (weak) i32 array, not a literal-like constant.
      Array idx =
          p.kind == Kind::array
              ? std::get<Array>(p.index->value())
              : Array::from_buffer(Array(std::get<int64_t>(p.index->value())).buffer(), true);
      if (a.shape()[p.axes[0]] == 0)
        throw_type_error(
            src,
            fmt::format("indexing: index is out of bounds for axis {} with size 0", p.axes[0]));
      starts.push_back(idx);
      sizes.push_back(1);
      squeeze_axes.push_back(p.axes[0]);
    } else {
      const Slice& sl = std::get<Slice>(p.index->value());
      if (sl.start || sl.stop || sl.step) trivial = false;
      int64_t s, e, st;
      slice_indices(sl, a.shape()[p.axes[0]], s, e, st, src);
      if (st != 1)
        throw UnsupportedError(location_prefix(src) +
                               "indexing: only unit steps are supported next to array indices");
      starts.push_back(Array(s));
      sizes.push_back(std::max<int64_t>(0, e - s));
    }
  }
  if (starts.size() > 1)
    for (Array& s : starts) s = lax::convert_element_type(s, DType::i32, false, src);
  Array r = trivial ? a : lax::dynamic_slice(a, starts, sizes, src);
  if (!squeeze_axes.empty()) r = lax::squeeze(r, squeeze_axes, src);
  if (!newaxis_dims.empty()) r = lax::expand_dims(r, newaxis_dims, src);
  return r;
}

}  // namespace

Array getitem(const Array& a, const std::vector<Index>& index, Loc src) {
  std::vector<Index> storage;
  std::vector<Parsed> parsed = parse(index, a.shape(), src, storage);
  // Integer arrays of rank > 0 index through gather (NumPy's advanced indexing); otherwise
  // slices and scalar indices become slice / dynamic_slice, as JAX rewrites them.
  if (has_advanced_index(parsed)) return gather_index(a, parsed, src);
  bool dynamic = std::any_of(parsed.begin(), parsed.end(),
                             [](const Parsed& p) { return p.kind == Kind::array; });
  return dynamic ? dynamic_index(a, parsed, src) : static_index(a, parsed, src);
}

}  // namespace cjax::numpy

namespace cjax {

Array Array::operator[](const IndexArgs& index) const {
  return numpy::getitem(*this, index.indices(), index.src());
}

}  // namespace cjax
