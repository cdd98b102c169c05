// gather and the scatters (scatter, scatter-add, -mul, -min, -max), with XLA's semantics: the
// last dimension of the indices is the index vector; a gather's out-of-bounds start is clamped
// (CLIP, PROMISE_IN_BOUNDS) or its slice reads the fill value (FILL_OR_DROP); a scatter's
// out-of-bounds window is clamped (CLIP) or skipped whole (FILL_OR_DROP, PROMISE_IN_BOUNDS).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/gather_params.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

using Bytes = unsigned char;

// The indices as int64s.
std::vector<int64_t> index_values(const Buffer& indices) {
  std::vector<int64_t> out(static_cast<size_t>(indices.aval().size()));
  dispatch_op<kInt>(indices.aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(indices.data());
    for (size_t i = 0; i < out.size(); ++i) {
      // u64 indices past int64's range are out of bounds whatever the operand.
      if constexpr (std::is_same_v<T, uint64_t>)
        out[i] = p[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                     ? std::numeric_limits<int64_t>::max()
                     : static_cast<int64_t>(p[i]);
      else
        out[i] = static_cast<int64_t>(p[i]);
    }
  });
  return out;
}

// The start of one slice or window in the operand: the index vector of batch position `batch`
// (row-major over the indices' batch dims) scattered into the operand's dims, and each batching
// dim set from the batch position. Returns false when `clamp` is off and some start is out of
// bounds (start < 0 or start + size > dim).
bool operand_start(const std::vector<int64_t>& idx, const Shape& batch_shape, int64_t batch,
                   const std::vector<int64_t>& index_map, const std::vector<int64_t>& operand_bdims,
                   const std::vector<int64_t>& indices_bdims, const Shape& operand_shape,
                   const Shape& window, bool clamp, std::vector<int64_t>& start) {
  std::fill(start.begin(), start.end(), 0);
  const int64_t n = static_cast<int64_t>(index_map.size());
  for (int64_t k = 0; k < n; ++k) start[index_map[k]] = idx[batch * n + k];
  if (!operand_bdims.empty()) {
    std::vector<int64_t> position(batch_shape.size());
    for (size_t d = batch_shape.size(), rest = static_cast<size_t>(batch); d-- > 0;) {
      position[d] = static_cast<int64_t>(rest % static_cast<size_t>(batch_shape[d]));
      rest /= static_cast<size_t>(batch_shape[d]);
    }
    for (size_t i = 0; i < operand_bdims.size(); ++i)
      start[operand_bdims[i]] = position[indices_bdims[i]];
  }
  for (size_t d = 0; d < start.size(); ++d) {
    const int64_t hi = operand_shape[d] - window[d];
    if (clamp)
      start[d] = std::clamp<int64_t>(start[d], 0, std::max<int64_t>(hi, 0));
    else if (start[d] < 0 || start[d] > hi)
      return false;
  }
  return true;
}

// The fill value of a FILL_OR_DROP gather, as one element of `dtype`: the param when given, else
// NaN for floats and the dtype's largest value otherwise (JAX's default).
std::vector<Bytes> fill_element(const Params& params, DType dtype) {
  const ParamValue* v = params.find("fill_value");
  std::vector<Bytes> out(itemsize(dtype));
  dispatch_op<kAll>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T x;
    if (v && (v->is<double>() || v->is<int64_t>() || v->is<bool>())) {
      const double d = v->is<double>()    ? v->as<double>()
                       : v->is<int64_t>() ? static_cast<double>(v->as<int64_t>())
                                          : static_cast<double>(v->as<bool>());
      x = static_cast<T>(d);
    } else if constexpr (std::is_floating_point_v<T>) {
      x = std::numeric_limits<T>::quiet_NaN();
    } else if constexpr (std::is_same_v<T, bool>) {
      x = true;
    } else {
      x = std::numeric_limits<T>::max();
    }
    std::memcpy(out.data(), &x, sizeof x);
  });
  return out;
}

void gather_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 2);
  check_outputs(out, 1);
  const auto dn = GatherDimensionNumbers::from_param(params.at("dimension_numbers"));
  const GatherScatterMode mode = gather_scatter_mode(params.at("mode"));
  const Shape sizes = params.get_ints("slice_sizes");
  const ShapedArray& oa = in[0].aval();
  const ShapedArray& ia = in[1].aval();
  const ShapedArray& ra = out[0].aval();
  if (ra.dtype != oa.dtype || static_cast<int64_t>(sizes.size()) != oa.rank() || ia.rank() < 1)
    kernel_type_error("operand {}, indices {} and output {} do not fit", oa.str_short(),
                      ia.str_short(), ra.str_short());
  const Shape batch_shape(ia.shape.begin(), ia.shape.end() - 1);
  const WindowDims dims = window_dims(dn, oa.rank(), ra.rank());
  const std::vector<int64_t>& out_batch_dims = dims.batch_dims;
  const std::vector<int64_t>& operand_offset_dims = dims.operand_window_dims;
  if (!dims.fit(ia.rank(), dn.offset_dims.size()))
    kernel_type_error("dimension numbers do not fit operand {} and indices {}", oa.str_short(),
                      ia.str_short());
  const std::vector<int64_t> os = row_major_strides(oa.shape);
  const std::vector<int64_t> rs = row_major_strides(ra.shape);
  Shape slice_shape;
  std::vector<int64_t> slice_out_strides, slice_in_strides;
  for (size_t k = 0; k < dn.offset_dims.size(); ++k) {
    slice_shape.push_back(ra.shape[dn.offset_dims[k]]);
    slice_out_strides.push_back(rs[dn.offset_dims[k]]);
    slice_in_strides.push_back(os[operand_offset_dims[k]]);
  }
  const std::vector<int64_t> idx = index_values(in[1]);
  const size_t item = itemsize(oa.dtype);
  const std::vector<Bytes> fill = mode == GatherScatterMode::fill_or_drop
                                      ? fill_element(params, oa.dtype)
                                      : std::vector<Bytes>();
  auto* dst = static_cast<Bytes*>(out[0].data());
  const auto* src = static_cast<const Bytes*>(in[0].data());
  int64_t batches = 1;
  for (int64_t d : batch_shape) batches *= d;
  std::vector<int64_t> start(static_cast<size_t>(oa.rank()));
  for (int64_t b = 0; b < batches; ++b) {
    const bool inside =
        operand_start(idx, batch_shape, b, dn.start_index_map, dn.operand_batching_dims,
                      dn.start_indices_batching_dims, oa.shape, sizes,
                      mode != GatherScatterMode::fill_or_drop, start);
    int64_t out_base = 0, in_base = 0;
    for (size_t j = 0, rest = static_cast<size_t>(b); j < batch_shape.size(); ++j) {
      const size_t d = batch_shape.size() - 1 - j;
      out_base +=
          static_cast<int64_t>(rest % static_cast<size_t>(batch_shape[d])) * rs[out_batch_dims[d]];
      rest /= static_cast<size_t>(batch_shape[d]);
    }
    for (size_t d = 0; d < start.size(); ++d) in_base += start[d] * os[d];
    strided_loop<2>(slice_shape, {slice_out_strides.data(), slice_in_strides.data()},
                    {out_base, in_base}, [&](const std::array<int64_t, 2>& o) {
                      std::memcpy(dst + static_cast<size_t>(o[0]) * item,
                                  inside ? src + static_cast<size_t>(o[1]) * item : fill.data(),
                                  item);
                    });
  }
}

enum class Combine { set, add, mul, min, max };

template <Combine C>
void scatter_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 3);
  check_outputs(out, 1);
  const auto dn = ScatterDimensionNumbers::from_param(params.at("dimension_numbers"));
  const GatherScatterMode mode = gather_scatter_mode(params.at("mode"));
  const ShapedArray& oa = in[0].aval();
  const ShapedArray& ia = in[1].aval();
  const ShapedArray& ua = in[2].aval();
  if (!out[0].aval().same_type(oa) || ua.dtype != oa.dtype || ia.rank() < 1)
    kernel_type_error("operand {}, indices {}, updates {} and output {} do not fit", oa.str_short(),
                      ia.str_short(), ua.str_short(), out[0].aval().str_short());
  const Shape batch_shape(ia.shape.begin(), ia.shape.end() - 1);
  const WindowDims dims = window_dims(dn, oa.rank(), ua.rank());
  const std::vector<int64_t>& update_batch_dims = dims.batch_dims;
  const std::vector<int64_t>& operand_window_dims = dims.operand_window_dims;
  if (!dims.fit(ia.rank(), dn.update_window_dims.size()))
    kernel_type_error("dimension numbers do not fit operand {}, indices {} and updates {}",
                      oa.str_short(), ia.str_short(), ua.str_short());
  const std::vector<int64_t> os = row_major_strides(oa.shape);
  const std::vector<int64_t> us = row_major_strides(ua.shape);
  Shape window(static_cast<size_t>(oa.rank()), 1), window_shape;
  std::vector<int64_t> window_out_strides, window_update_strides;
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k) {
    const int64_t size = ua.shape[dn.update_window_dims[k]];
    window[operand_window_dims[k]] = size;
    window_shape.push_back(size);
    window_out_strides.push_back(os[operand_window_dims[k]]);
    window_update_strides.push_back(us[dn.update_window_dims[k]]);
  }
  const std::vector<int64_t> idx = index_values(in[1]);
  if (in[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
  dispatch_op<kAll>(oa.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = static_cast<T*>(out[0].data());
    const T* upd = static_cast<const T*>(in[2].data());
    int64_t batches = 1;
    for (int64_t d : batch_shape) batches *= d;
    std::vector<int64_t> start(static_cast<size_t>(oa.rank()));
    for (int64_t b = 0; b < batches; ++b) {
      if (!operand_start(idx, batch_shape, b, dn.scatter_dims_to_operand_dims,
                         dn.operand_batching_dims, dn.scatter_indices_batching_dims, oa.shape,
                         window, mode == GatherScatterMode::clip, start))
        continue;  // out of bounds: the whole window is dropped
      int64_t out_base = 0, update_base = 0;
      for (size_t d = 0; d < start.size(); ++d) out_base += start[d] * os[d];
      for (size_t j = 0, rest = static_cast<size_t>(b); j < batch_shape.size(); ++j) {
        const size_t d = batch_shape.size() - 1 - j;
        update_base += static_cast<int64_t>(rest % static_cast<size_t>(batch_shape[d])) *
                       us[update_batch_dims[d]];
        rest /= static_cast<size_t>(batch_shape[d]);
      }
      strided_loop<2>(window_shape, {window_out_strides.data(), window_update_strides.data()},
                      {out_base, update_base}, [&](const std::array<int64_t, 2>& o) {
                        T& x = dst[o[0]];
                        const T y = upd[o[1]];
                        if constexpr (C == Combine::set) {
                          x = y;
                        } else if constexpr (std::is_same_v<T, bool>) {
                          // bool: add is or, mul is and, as XLA's.
                          if constexpr (C == Combine::add || C == Combine::max) x = x || y;
                          if constexpr (C == Combine::mul || C == Combine::min) x = x && y;
                        } else if constexpr (C == Combine::add) {
                          x = static_cast<T>(x + y);
                        } else if constexpr (C == Combine::mul) {
                          x = static_cast<T>(x * y);
                        } else if constexpr (std::is_floating_point_v<T>) {
                          // min/max propagate NaN, as lax.min and lax.max do.
                          if (std::isnan(x) || std::isnan(y))
                            x = std::numeric_limits<T>::quiet_NaN();
                          else
                            x = C == Combine::min ? std::min(x, y) : std::max(x, y);
                        } else {
                          x = C == Combine::min ? std::min(x, y) : std::max(x, y);
                        }
                      });
    }
  });
}

}  // namespace

void register_gather_scatter_kernels(KernelRegistry& r) {
  r.add("gather", gather_kernel);
  r.add("scatter", scatter_kernel<Combine::set>);
  r.add("scatter-add", scatter_kernel<Combine::add>);
  r.add("scatter-mul", scatter_kernel<Combine::mul>);
  r.add("scatter-min", scatter_kernel<Combine::min>);
  r.add("scatter-max", scatter_kernel<Combine::max>);
}

}  // namespace cjax::runtime
