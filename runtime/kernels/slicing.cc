// Primitives that cut and join arrays: concatenate, split, slice, dynamic_slice,
// dynamic_update_slice and pad. Byte-level, so every dtype with storage is accepted.
#include <algorithm>

#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

using Bytes = unsigned char;

// Shapes equal except along `axis`.
bool same_except(const Shape& a, const Shape& b, size_t axis) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (d != axis && a[d] != b[d]) return false;
  return true;
}

// concatenate[dimension]: the operands one after the other along `dimension`.
void concatenate_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_min_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& oa = out[0].aval();
  const size_t axis = static_cast<size_t>(normalize_axis(params.get_int("dimension"), oa.rank()));
  int64_t total = 0;
  for (const Buffer& b : in) {
    if (b.aval().dtype != oa.dtype || !same_except(b.aval().shape, oa.shape, axis))
      kernel_type_error("operand {} does not fit output {} along dimension {}",
                        b.aval().str_short(), oa.str_short(), axis);
    total += b.aval().shape[axis];
  }
  if (total != oa.shape[axis])
    kernel_type_error("operands add up to {} along dimension {}, not {}", total, axis,
                      oa.str_short());
  const size_t item = itemsize(oa.dtype);
  const AxisSplit os = split_at(oa.shape, axis);
  auto* dst = static_cast<Bytes*>(out[0].data());
  int64_t at = 0;  // position along the axis
  for (const Buffer& b : in) {
    const AxisSplit s = split_at(b.aval().shape, axis);
    const size_t block = static_cast<size_t>(s.size * s.inner) * item;
    const auto* src = static_cast<const Bytes*>(b.data());
    for (int64_t o = 0; o < s.outer && block; ++o)
      std::memcpy(dst + static_cast<size_t>((o * os.size + at) * os.inner) * item,
                  src + static_cast<size_t>(o) * block, block);
    at += s.size;
  }
}

// split[sizes axis]: the inverse of concatenate, one output per size.
void split_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  const ShapedArray& ia = in[0].aval();
  const size_t axis = static_cast<size_t>(normalize_axis(params.get_int("axis"), ia.rank()));
  int64_t total = 0;
  for (const Buffer& o : out) {
    if (o.aval().dtype != ia.dtype || !same_except(o.aval().shape, ia.shape, axis))
      kernel_type_error("output {} does not fit operand {} along dimension {}",
                        o.aval().str_short(), ia.str_short(), axis);
    total += o.aval().shape[axis];
  }
  if (total != ia.shape[axis])
    kernel_type_error("outputs add up to {} along dimension {}, not {}", total, axis,
                      ia.str_short());
  const size_t item = itemsize(ia.dtype);
  const AxisSplit is = split_at(ia.shape, axis);
  const auto* src = static_cast<const Bytes*>(in[0].data());
  int64_t at = 0;
  for (Buffer& o : out) {
    const AxisSplit s = split_at(o.aval().shape, axis);
    const size_t block = static_cast<size_t>(s.size * s.inner) * item;
    auto* dst = static_cast<Bytes*>(o.data());
    for (int64_t k = 0; k < s.outer && block; ++k)
      std::memcpy(dst + static_cast<size_t>(k) * block,
                  src + static_cast<size_t>((k * is.size + at) * is.inner) * item, block);
    at += s.size;
  }
}

// slice[start_indices limit_indices strides]: elements start, start+stride, ... below limit.
void slice_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& oa = out[0].aval();
  const std::vector<int64_t> start = params.get_ints("start_indices");
  const std::vector<int64_t> limit = params.get_ints("limit_indices");
  std::vector<int64_t> step(start.size(), 1);
  if (const ParamValue* v = params.find("strides"); v && !v->is_none())
    step = params.get_ints("strides");
  const size_t r = ia.shape.size();
  if (start.size() != r || limit.size() != r || step.size() != r || ia.dtype != oa.dtype)
    kernel_type_error("slice params do not match operand {}", ia.str_short());
  Shape want(r);
  std::vector<int64_t> own = row_major_strides(ia.shape), strides(r);
  int64_t base = 0;
  for (size_t d = 0; d < r; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > ia.shape[d] || step[d] < 1)
      kernel_type_error("slice {}:{}:{} out of bounds for dimension {} of {}", start[d], limit[d],
                        step[d], d, ia.str_short());
    want[d] = (limit[d] - start[d] + step[d] - 1) / step[d];
    strides[d] = own[d] * step[d];
    base += start[d] * own[d];
  }
  if (want != oa.shape)
    kernel_type_error("slice of {} has shape {}, not {}", ia.str_short(), shape_str(want),
                      oa.str_short());
  strided_copy(out[0].data(), in[0].data(), itemsize(ia.dtype), oa.shape, strides, base);
}

// Start indices from scalar operands, clamped so that a window of `sizes` fits, as XLA does.
std::vector<int64_t> clamped_starts(std::span<const Buffer> index_operands, const Shape& shape,
                                    const Shape& sizes) {
  if (index_operands.size() != shape.size())
    kernel_type_error("expected {} index operands, got {}", shape.size(), index_operands.size());
  std::vector<int64_t> starts(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > shape[d])
      kernel_type_error("window size {} exceeds dimension {} of size {}", sizes[d], d, shape[d]);
    starts[d] = std::clamp<int64_t>(scalar_index(index_operands[d]), 0, shape[d] - sizes[d]);
  }
  return starts;
}

// dynamic_slice[slice_sizes](operand, *start_indices).
void dynamic_slice_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_min_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& oa = out[0].aval();
  const Shape sizes = params.has("slice_sizes") ? params.get_ints("slice_sizes") : oa.shape;
  if (sizes != oa.shape || ia.dtype != oa.dtype || sizes.size() != ia.shape.size())
    kernel_type_error("slice_sizes {} do not fit operand {} and output {}", shape_str(sizes),
                      ia.str_short(), oa.str_short());
  const std::vector<int64_t> starts = clamped_starts(in.subspan(1), ia.shape, sizes);
  std::vector<int64_t> strides = row_major_strides(ia.shape);
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) base += starts[d] * strides[d];
  strided_copy(out[0].data(), in[0].data(), itemsize(ia.dtype), oa.shape, strides, base);
}

// dynamic_update_slice(operand, update, *start_indices): the operand with `update` written at
// the (clamped) start.
void dynamic_update_slice_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_min_arity(in, 2);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& ua = in[1].aval();
  if (!ia.same_type(out[0].aval()) || ua.dtype != ia.dtype || ua.rank() != ia.rank())
    kernel_type_error("operand {}, update {} and output {} do not fit", ia.str_short(),
                      ua.str_short(), out[0].aval().str_short());
  const std::vector<int64_t> starts = clamped_starts(in.subspan(2), ia.shape, ua.shape);
  if (in[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
  const size_t item = itemsize(ia.dtype);
  const std::vector<int64_t> os = row_major_strides(ia.shape);
  const std::vector<int64_t> us = row_major_strides(ua.shape);
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) base += starts[d] * os[d];
  auto* dst = static_cast<Bytes*>(out[0].data());
  const auto* src = static_cast<const Bytes*>(in[1].data());
  strided_loop<2>(ua.shape, {os.data(), us.data()}, {base, 0},
                  [&](const std::array<int64_t, 2>& o) {
                    std::memcpy(dst + static_cast<size_t>(o[0]) * item,
                                src + static_cast<size_t>(o[1]) * item, item);
                  });
}

// pad[padding_config](operand, padding_value): per dimension (low, high, interior). Negative low
// or high padding removes elements from that edge.
void pad_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 2);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& oa = out[0].aval();
  if (in[1].aval().rank() != 0 || in[1].aval().dtype != ia.dtype || oa.dtype != ia.dtype)
    kernel_type_error("padding value {} must be a scalar of the operand's dtype ({})",
                      in[1].aval().str_short(), ia.str_short());
  const ParamValue& cfg = params.at("padding_config");
  const std::vector<ParamValue>* dims = nullptr;
  if (cfg.is<ParamTuple>()) dims = &cfg.as<ParamTuple>().items;
  if (cfg.is<ParamList>()) dims = &cfg.as<ParamList>().items;
  if (!dims || dims->size() != ia.shape.size())
    kernel_type_error("padding_config must hold one (low, high, interior) per dimension of {}",
                      ia.str_short());
  const size_t r = ia.shape.size();
  std::vector<int64_t> lo(r), step(r);
  Shape want(r);
  for (size_t d = 0; d < r; ++d) {
    std::vector<int64_t> t = (*dims)[d].to_ints();
    if (t.size() != 3 || t[2] < 0)
      kernel_type_error("bad padding_config entry for dimension {}", d);
    const int64_t n = ia.shape[d];
    lo[d] = t[0];
    step[d] = t[2] + 1;
    want[d] = t[0] + t[1] + (n == 0 ? 0 : n + (n - 1) * t[2]);
    if (want[d] < 0) kernel_type_error("padding removes more than dimension {} holds", d);
  }
  if (want != oa.shape)
    kernel_type_error("padding {} gives shape {}, not {}", ia.str_short(), shape_str(want),
                      oa.str_short());
  const size_t item = itemsize(ia.dtype);
  auto* dst = static_cast<Bytes*>(out[0].data());
  const auto* src = static_cast<const Bytes*>(in[0].data());
  for (int64_t i = 0, n = oa.size(); i < n; ++i)
    std::memcpy(dst + static_cast<size_t>(i) * item, in[1].data(), item);
  // Each operand element lands at lo + index * (interior + 1), unless cropped away.
  const std::vector<int64_t> os = row_major_strides(oa.shape);
  const std::vector<int64_t> is = row_major_strides(ia.shape);
  for (int64_t i = 0, n = ia.size(); i < n; ++i) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < r; ++d) {
      const int64_t idx = (i / is[d]) % ia.shape[d];
      const int64_t pos = lo[d] + idx * step[d];
      if (pos < 0 || pos >= oa.shape[d]) {
        inside = false;
        break;
      }
      off += pos * os[d];
    }
    if (inside)
      std::memcpy(dst + static_cast<size_t>(off) * item, src + static_cast<size_t>(i) * item, item);
  }
}

}  // namespace

void register_slicing_kernels(KernelRegistry& r) {
  r.add("concatenate", concatenate_kernel);
  r.add("split", split_kernel);
  r.add("slice", slice_kernel);
  r.add("dynamic_slice", dynamic_slice_kernel);
  r.add("dynamic_update_slice", dynamic_update_slice_kernel);
  r.add("pad", pad_kernel);
}

}  // namespace cjax::runtime
