// What NumPy indexing's two halves share (internal to cjax/): the index list parsed against
// the array's shape (indexing.cc), and the gather and scatter built from it (indexing_gather.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cjax/array.h"
#include "ir/gather_params.h"
#include "ir/source_info.h"

namespace cjax::numpy::detail {

enum class Kind { none, ellipsis, slice, integer, array };

struct Parsed {
  Kind kind;
  const Index* index;
  std::vector<int64_t> axes;  // consumed axes
};

Kind kind_of(const Index& i, const SourceInfo& src);

// indexing._parse_indices followed by expand_ellipses: one entry per index, ellipses replaced by
// full slices, trailing full slices added.
std::vector<Parsed> parse(const std::vector<Index>& indices, const Shape& shape,
                          const SourceInfo& src, std::vector<Index>& storage);

// Python's slice.indices(size) for a positive or negative step.
void slice_indices(const Slice& s, int64_t size, int64_t& start, int64_t& stop, int64_t& step,
                   const SourceInfo& src);

// Whether the index holds an integer array of rank > 0 (JAX's _is_advanced_int_indexer).
bool has_advanced_index(const std::vector<Parsed>& parsed);

// x[...] through gather (JAX's _rewriting_take -> _gather); with a mode and fill value, as
// x.at[...].get(mode=..., fill_value=...).
Array gather_index(const Array& a, const std::vector<Parsed>& parsed, const SourceInfo& src);
Array gather_with_mode(const Array& a, const std::vector<Parsed>& parsed,
                       std::optional<GatherScatterMode> mode, std::optional<double> fill_value,
                       const SourceInfo& src);

// JAX's _Indexer: what _index_to_gather makes of an index.
struct GatherIndexer {
  Array gather_indices;  // null when no index is gathered
  GatherDimensionNumbers dnums;
  std::vector<int64_t> gather_slice_shape, slice_shape, newaxis_dims, reversed_y_dims;
  bool unique_indices = false, indices_are_sorted = false;
};
GatherIndexer index_to_gather(const Shape& x_shape, const std::vector<Parsed>& parsed,
                              bool normalize_indices, const SourceInfo& src);

}  // namespace cjax::numpy::detail
