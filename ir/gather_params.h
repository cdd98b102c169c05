// The params of gather and the scatters (jax/_src/lax/slicing.py): GatherDimensionNumbers,
// ScatterDimensionNumbers and GatherScatterMode. JAX prints them with str(), so a jaxpr carries
// them as opaque text (`GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), ...)`,
// `GatherScatterMode.FILL_OR_DROP`); these types write that text and read it back, older JAX's
// form without the batching dims included. The text is the whole value, so it keys caches
// exactly (opaque_text_is_exact).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/params.h"

namespace cjax {

// Which entries of each of the five fields JAX computed with numpy (its batching rules shift dims
// with np.add), printed `np.int64(3)`: those from numpy_from[field] on (-1: none). Equality and
// semantics ignore it.
using NumpyFrom = std::array<int, 5>;
inline constexpr NumpyFrom kPlainInts = {-1, -1, -1, -1, -1};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
      start_indices_batching_dims;
  NumpyFrom numpy_from = kPlainInts;
  ParamValue to_param() const;
  static GatherDimensionNumbers from_param(const ParamValue& v);  // throws cjax::Error
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
      operand_batching_dims, scatter_indices_batching_dims;
  NumpyFrom numpy_from = kPlainInts;
  ParamValue to_param() const;
  static ScatterDimensionNumbers from_param(const ParamValue& v);  // throws cjax::Error
};

// How a gather's output, or a scatter's updates, split into batch dims (one per batch position
// of the indices, whose last dim is the index vector) and window dims, and which operand dims
// the window dims walk (neither collapsed/inserted nor batching), each in order.
struct WindowDims {
  std::vector<int64_t> batch_dims;  // of the gather's output / the scatter's updates
  std::vector<int64_t> operand_window_dims;
  // Whether they fit: one batch dim per dim of the indices but the last, one operand dim per
  // window dim.
  bool fit(int64_t indices_rank, size_t window_rank) const {
    return batch_dims.size() + 1 == static_cast<size_t>(indices_rank) &&
           operand_window_dims.size() == window_rank;
  }
};
WindowDims window_dims(const GatherDimensionNumbers& dn, int64_t operand_rank, int64_t out_rank);
WindowDims window_dims(const ScatterDimensionNumbers& dn, int64_t operand_rank,
                       int64_t updates_rank);

// What an out-of-bounds index does. clip: the slice is moved inside the operand; fill_or_drop:
// a gather's out-of-bounds slice reads the fill value, a scatter's update is dropped;
// promise_in_bounds: the caller promises none (cjax clamps, as XLA does on CPU).
enum class GatherScatterMode { clip, fill_or_drop, promise_in_bounds };
ParamValue to_param(GatherScatterMode mode);                 // GatherScatterMode.CLIP, ...
GatherScatterMode gather_scatter_mode(const ParamValue& v);  // throws cjax::Error

// Whether an opaque param's text is the whole of its value (one of the types above), so that
// two params of equal text are equal.
bool opaque_text_is_exact(std::string_view text);

}  // namespace cjax
