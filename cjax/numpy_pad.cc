// jnp.pad (jax/_src/numpy/lax_numpy.py: pad and its _pad_* helpers): JAX's `jit[name=_pad]` over
// the array and the constant (0 in the modes that read none). The constant mode is one `pad` eqn
// with the widths as numpy ints; edge, wrap, reflect and symmetric are built axis by axis from
// slices, `_flip`s (jnp.flip's jit over `rev`) and concatenations, eqn for eqn as JAX builds them;
// maximum, minimum, mean and median from each axis' statistic repeated beside it (JAX's
// _pad_stats); linear_ramp from jnp.linspace between the end values and the edges; empty from
// zeros.
#include <fmt/format.h>

#include <functional>
#include <string>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/trace_emitter.h"
#include "passes/lax/lax.h"

namespace cjax::numpy {
namespace {

// One (before, after) pair per axis, none negative; one pair stands for every axis (JAX's
// _broadcast_to_pairs).
void check_widths(const Array& a, std::vector<std::pair<int64_t, int64_t>>& pad_width, Loc src) {
  if (pad_width.size() == 1 && a.ndim() != 1)
    pad_width.assign(static_cast<size_t>(a.ndim()), pad_width[0]);
  if (static_cast<int64_t>(pad_width.size()) != a.ndim())
    throw_type_error(src, fmt::format("pad: {} (before, after) pairs for an array of {} "
                                      "dimensions",
                                      pad_width.size(), a.ndim()));
  for (const auto& [lo, hi] : pad_width)
    if (lo < 0 || hi < 0) throw_type_error(src, "pad: index can't contain negative values");
}

// JAX's _pad_constant for a scalar: one `pad` eqn, the widths as numpy ints.
Array pad_constant(const Array& x, const Array& constant_values,
                   const std::vector<std::pair<int64_t, int64_t>>& pad_width, Loc src) {
  const Array value = lax::convert_element_type(constant_values, x.dtype(), x.weak_type(), src);
  ParamTuple config;
  for (const auto& [lo, hi] : pad_width)
    config.items.push_back(
        ParamTuple{{ParamValue::np_int(lo), ParamValue::np_int(hi), ParamValue(int64_t{0})}});
  TraceEmitter e(src);
  return lax_ops::emit1(e, "pad", {x, value}, {{"padding_config", std::move(config)}});
}

}  // namespace

Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width,
          const Array& constant_values, Loc src) {
  check_widths(a, pad_width, src);
  if (constant_values.ndim() != 0)
    throw UnsupportedError(location_prefix(src) +
                           "pad: constant_values must be a scalar (per-axis values are not "
                           "supported)");
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    return {pad_constant(args[0], args[1], pad_width, src)};
  };
  Array args[] = {a, constant_values};
  return detail::call_jitted("_pad", impl, args, src)[0];
}

Array pad(const Array& a, int64_t width, const Array& constant_values, Loc src) {
  return pad(a, {{width, width}}, constant_values, src);
}

// JAX's _pad_func: not jitted; zeros by lax.pad (_pad_constant), then the function along each
// axis in turn.
Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width,
          const PadFunction& mode, Loc src) {
  if (!mode) throw_type_error(src, "pad: the padding function is empty");
  check_widths(a, pad_width, src);
  // jnp.asarray(0): a weakly typed i32 array, not a C++ number.
  const Array zero = Array::from_buffer(Array(0).buffer(), true);
  Array padded = pad_constant(a, zero, pad_width, src);
  for (int64_t axis = 0; axis < padded.ndim(); ++axis) {
    const std::pair<int64_t, int64_t> widths = pad_width[static_cast<size_t>(axis)];
    auto fill = [&](const Array& vector) {
      Array out = mode(vector, widths, axis);
      if (out.shape() != vector.shape())
        throw_type_error(src, fmt::format("pad: the padding function returned {} for a {} "
                                          "vector along axis {}; it must return the vector, "
                                          "filled in",
                                          out.aval().str_short(), vector.aval().str_short(), axis));
      return out;
    };
    padded = apply_along_axis(fill, axis, padded, src);
  }
  return padded;
}

namespace {

// lax.slice_in_dim(x, start, stop, axis=axis), with Python's negative indices and stop None (as
// `stop` = the size).
Array slice_in_dim(const Array& x, int64_t start, int64_t stop, int64_t axis, Loc src) {
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  std::vector<int64_t> starts(static_cast<size_t>(x.ndim()), 0), limits = x.shape();
  starts[static_cast<size_t>(axis)] = start;
  limits[static_cast<size_t>(axis)] = stop;
  return lax::slice(x, starts, limits, std::vector<int64_t>(static_cast<size_t>(x.ndim()), 1), src);
}

Array concatenate_in_dim(const std::vector<Array>& parts, int64_t axis, Loc src) {
  return parts.size() == 1 ? parts[0] : lax::concatenate(parts, axis, src);
}

// jnp.repeat(edge, k, axis) of a slice one wide: broadcast to k copies beside it, then merged.
Array repeat_edge(const Array& edge, int64_t k, int64_t axis, Loc src) {
  Shape wide = edge.shape();
  wide.insert(wide.begin() + axis + 1, k);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < edge.ndim(); ++d) dims.push_back(d <= axis ? d : d + 1);
  Shape merged = edge.shape();
  merged[static_cast<size_t>(axis)] = k;
  return lax::reshape(lax::broadcast_in_dim(edge, wide, dims, src), merged, std::nullopt, src);
}

// Whether axis i of x is empty, and so left alone: refused if it is to be padded.
bool empty_axis(const Array& x, int64_t i, const std::vector<std::pair<int64_t, int64_t>>& widths,
                std::string_view mode, Loc src) {
  if (x.shape()[static_cast<size_t>(i)] != 0) return false;
  const auto [before, after] = widths[static_cast<size_t>(i)];
  if (before > 0 || after > 0)
    throw_type_error(src, fmt::format("pad: cannot apply '{}' padding to an empty axis", mode));
  return true;
}

Array pad_edge(Array x, const std::vector<std::pair<int64_t, int64_t>>& widths, Loc src) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (empty_axis(x, i, widths, "edge", src)) continue;
    const int64_t n = x.shape()[static_cast<size_t>(i)];
    const auto [before, after] = widths[static_cast<size_t>(i)];
    const Array head = repeat_edge(slice_in_dim(x, 0, 1, i, src), before, i, src);
    const Array tail = repeat_edge(slice_in_dim(x, n - 1, n, i, src), after, i, src);
    x = lax::concatenate(std::vector<Array>{head, x, tail}, i, src);
  }
  return x;
}

Array pad_wrap(Array x, const std::vector<std::pair<int64_t, int64_t>>& widths, Loc src) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (empty_axis(x, i, widths, "wrap", src)) continue;
    const int64_t n = x.shape()[static_cast<size_t>(i)];
    const auto [before, after] = widths[static_cast<size_t>(i)];
    std::vector<Array> parts;
    if (before % n > 0) parts.push_back(slice_in_dim(x, n - before % n, n, i, src));
    parts.insert(parts.end(), static_cast<size_t>(before / n + after / n + 1), x);
    if (after % n > 0) parts.push_back(slice_in_dim(x, 0, after % n, i, src));
    x = concatenate_in_dim(parts, i, src);
  }
  return x;
}

// jnp.flip(x, axis): its own jit, traced once per axis and aval.
Array flip(const Array& x, int64_t axis, Loc src) {
  auto impl = [axis, src](std::span<const Array> args) -> std::vector<Array> {
    return {lax::rev(args[0], {axis}, src)};
  };
  Array args[] = {x};
  return detail::call_jitted("_flip", impl, args, src, fmt::format("axis={}", axis))[0];
}

// Reflect (mirrored about the edge element) or symmetric (the edge element repeated), taking
// at most one mirror image per concatenation; "odd" reflects the values about the edge too.
Array pad_mirrored(Array x, const std::vector<std::pair<int64_t, int64_t>>& widths,
                   std::string_view mode, bool odd, Loc src) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (empty_axis(x, i, widths, mode, src)) continue;
    const int64_t n = x.shape()[static_cast<size_t>(i)];
    const auto [before_width, after_width] = widths[static_cast<size_t>(i)];
    if (before_width == 0 && after_width == 0) continue;
    // A reflection skips the edge element, except of an axis one long.
    const int64_t offset = mode == "reflect" && n > 1 ? 1 : 0;
    auto build = [&](Array y, int64_t padding, bool before) {
      Array edge =
          before ? slice_in_dim(y, 0, 1, i, src) : slice_in_dim(y, -1, y.shape()[i], i, src);
      while (padding > 0) {
        const int64_t now = std::min(padding, n - offset);
        padding -= now;
        const int64_t size = y.shape()[static_cast<size_t>(i)];
        Array part = before ? slice_in_dim(y, offset, offset + now, i, src)
                            : slice_in_dim(y, -(now + offset),
                                           mode == "symmetric" || n == 1 ? size : size - 1, i, src);
        part = flip(part, i, src);
        if (odd) {
          part = subtract(multiply(2, edge, src), part, src);
          if (n > 1) {
            const int64_t m = part.shape()[static_cast<size_t>(i)];
            edge = before ? slice_in_dim(part, 0, 1, i, src) : slice_in_dim(part, m - 1, m, i, src);
          }
        }
        y = before ? lax::concatenate(std::vector<Array>{part, y}, i, src)
                   : lax::concatenate(std::vector<Array>{y, part}, i, src);
      }
      return y;
    };
    x = build(x, before_width, true);
    x = build(x, after_width, false);
  }
  return x;
}

bool is_statistic(std::string_view mode) {
  return mode == "maximum" || mode == "minimum" || mode == "mean" || mode == "median";
}

// jnp.round(x): its own jit; integers pass through it unchanged, floats round half to even.
Array round_to_even(const Array& x, Loc src) {
  auto impl = [src](std::span<const Array> args) -> std::vector<Array> {
    if (!is_floating(args[0].dtype())) return {args[0]};
    TraceEmitter e(src);
    return {lax_ops::emit1(e, "round", {args[0]}, {{"rounding_method", int64_t{1}}})};
  };
  Array args[] = {x};
  return detail::call_jitted("round", impl, args, src, "decimals=0")[0];
}

// JAX's _pad_stats: axis by axis, the statistic (amax, amin or mean, keeping the axis) of the
// first and the last stat_length elements (all of them when stat_length is empty; at most the
// axis' length), rounded for integer arrays, in the array's dtype, repeated to each width.
Array pad_statistic(Array x, const std::vector<std::pair<int64_t, int64_t>>& widths,
                    const std::vector<std::pair<int64_t, int64_t>>& stat_length,
                    std::string_view mode, Loc src) {
  auto statistic = [&](const Array& y, int64_t axis) {
    const Axis along(axis);
    if (mode == "maximum") return max(y, along, true, src);
    if (mode == "minimum") return min(y, along, true, src);
    if (mode == "median") return median(y, along, true, src);
    return mean(y, along, true, std::nullopt, src);
  };
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (empty_axis(x, i, widths, mode, src)) continue;
    Array before, after;
    if (stat_length.empty()) {
      before = after = statistic(x, i);
    } else {
      const int64_t n = x.shape()[static_cast<size_t>(i)];
      const int64_t lo = std::min(stat_length[static_cast<size_t>(i)].first, n);
      const int64_t hi = std::min(stat_length[static_cast<size_t>(i)].second, n);
      before = statistic(slice_in_dim(x, 0, lo, i, src), i);
      after = statistic(slice_in_dim(x, -hi, n, i, src), i);
    }
    if (is_integer(x.dtype())) {
      before = round_to_even(before, src);
      after = round_to_even(after, src);
    }
    before = lax::convert_element_type(before, x.dtype(), x.weak_type(), src);
    after = lax::convert_element_type(after, x.dtype(), x.weak_type(), src);
    const auto [npad_before, npad_after] = widths[static_cast<size_t>(i)];
    x = lax::concatenate(std::vector<Array>{repeat_edge(before, npad_before, i, src), x,
                                            repeat_edge(after, npad_after, i, src)},
                         i, src);
  }
  return x;
}

// JAX's _pad_linear_ramp: axis by axis, jnp.linspace from each end value towards the edge
// element (excluded), in the array's dtype, the trailing ramp flipped to run outwards.
Array pad_linear_ramp(Array x, const std::vector<std::pair<int64_t, int64_t>>& widths,
                      const std::vector<std::pair<Array, Array>>& end_values, Loc src) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (empty_axis(x, i, widths, "linear_ramp", src)) continue;
    const int64_t n = x.shape()[static_cast<size_t>(i)];
    const auto& [end_before, end_after] = end_values[static_cast<size_t>(i)];
    const auto [npad_before, npad_after] = widths[static_cast<size_t>(i)];
    const Array edge_before = slice_in_dim(x, 0, 1, i, src);
    const Array edge_after = slice_in_dim(x, -1, n, i, src);
    Array ramp_before = linspace(end_before, lax::squeeze(edge_before, {i}, src), npad_before,
                                 false, x.dtype(), i, src);
    ramp_before = lax::convert_element_type(ramp_before, x.dtype(), x.weak_type(), src);
    Array ramp_after = linspace(end_after, lax::squeeze(edge_after, {i}, src), npad_after, false,
                                x.dtype(), i, src);
    ramp_after = lax::convert_element_type(ramp_after, x.dtype(), x.weak_type(), src);
    ramp_after = flip(ramp_after, i, src);
    x = lax::concatenate(std::vector<Array>{ramp_before, x, ramp_after}, i, src);
  }
  return x;
}

// JAX's _pad_empty: axis by axis, zeros (jnp.empty is jnp.zeros) of each width beside the array,
// as jnp.empty_like(array, shape=...) makes them; every axis, padded or not.
Array pad_empty(Array x, const std::vector<std::pair<int64_t, int64_t>>& widths, Loc src) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const auto [before, after] = widths[static_cast<size_t>(i)];
    Shape shape_before = x.shape(), shape_after = x.shape();
    shape_before[static_cast<size_t>(i)] = before;
    shape_after[static_cast<size_t>(i)] = after;
    const Array pad_before = lax::full_like(x, 0, std::nullopt, shape_before, src);
    const Array pad_after = lax::full_like(x, 0, std::nullopt, shape_after, src);
    x = lax::concatenate(std::vector<Array>{pad_before, x, pad_after}, i, src);
  }
  return x;
}

// The jit JAX's every non-constant mode runs in: over the array and the (unused) constant 0.
Array call_pad(const Array& a, std::function<Array(const Array&)> body, Loc src) {
  auto impl = [body](std::span<const Array> args) -> std::vector<Array> { return {body(args[0])}; };
  Array args[] = {a, Array(0)};
  return detail::call_jitted("_pad", impl, args, src)[0];
}

// JAX's _broadcast_to_pairs for a keyword's per-axis pairs: none (the default for every axis),
// one pair for every axis, or one per axis.
template <typename T>
std::vector<std::pair<T, T>> pairs_per_axis(std::vector<std::pair<T, T>> pairs, const Array& a,
                                            std::pair<T, T> fallback, std::string_view name,
                                            Loc src) {
  if (pairs.empty()) pairs.push_back(fallback);
  if (pairs.size() == 1 && a.ndim() != 1) pairs.assign(static_cast<size_t>(a.ndim()), pairs[0]);
  if (static_cast<int64_t>(pairs.size()) != a.ndim())
    throw_type_error(src, fmt::format("pad: {} {} pairs for an array of {} dimensions",
                                      pairs.size(), name, a.ndim()));
  return pairs;
}

}  // namespace

Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width, std::string_view mode,
          const PadOptions& options, Loc src) {
  const bool mirrored = mode == "reflect" || mode == "symmetric";
  if (mode != "constant" && mode != "edge" && mode != "wrap" && !mirrored &&
      mode != "linear_ramp" && mode != "empty" && !is_statistic(mode))
    throw UnsupportedError(location_prefix(src) +
                           fmt::format("pad: unimplemented padding mode '{}' (cjax has "
                                       "constant, edge, wrap, reflect, symmetric, linear_ramp, "
                                       "maximum, minimum, mean, median and empty)",
                                       mode));
  // JAX's allowed keywords per mode.
  if (!options.stat_length.empty() && !is_statistic(mode))
    throw_type_error(src, fmt::format("pad: stat_length is for the maximum, minimum, mean and "
                                      "median modes, not '{}'",
                                      mode));
  if (!options.end_values.empty() && mode != "linear_ramp")
    throw_type_error(src,
                     fmt::format("pad: end_values is for the linear_ramp mode, not '{}'", mode));
  if (options.reflect_type != "even" && options.reflect_type != "odd")
    throw_type_error(src, fmt::format("pad: reflect_type must be 'even' or 'odd', not '{}'",
                                      options.reflect_type));
  if (options.reflect_type != "even" && !mirrored)
    throw_type_error(src, fmt::format("pad: reflect_type is for the reflect and symmetric modes, "
                                      "not '{}'",
                                      mode));
  if (mode == "constant") return pad(a, std::move(pad_width), options.constant_values, src);
  check_widths(a, pad_width, src);
  if (mode == "linear_ramp") {
    const auto end_values =
        pairs_per_axis(options.end_values, a, {Array(0), Array(0)}, "end_values", src);
    for (const auto& [lo, hi] : end_values)
      if (lo.ndim() != 0 || hi.ndim() != 0)
        throw_type_error(src, "pad: end_values must be scalars");
    return call_pad(
        a, [=](const Array& x) { return pad_linear_ramp(x, pad_width, end_values, src); }, src);
  }
  if (is_statistic(mode)) {
    std::vector<std::pair<int64_t, int64_t>> stat_length;
    if (!options.stat_length.empty()) {
      stat_length = pairs_per_axis(options.stat_length, a, {0, 0}, "stat_length", src);
      for (const auto& [lo, hi] : stat_length) {
        if (lo < 0 || hi < 0) throw_type_error(src, "pad: index can't contain negative values");
        if (lo == 0 || hi == 0)
          throw_type_error(src, "pad: stat_length of 0 yields no value for padding");
      }
    }
    return call_pad(
        a,
        [=, m = std::string(mode)](const Array& x) {
          return pad_statistic(x, pad_width, stat_length, m, src);
        },
        src);
  }
  const bool odd = options.reflect_type == "odd";
  return call_pad(
      a,
      [=, m = std::string(mode)](const Array& x) {
        if (m == "empty") return pad_empty(x, pad_width, src);
        if (m == "edge") return pad_edge(x, pad_width, src);
        if (m == "wrap") return pad_wrap(x, pad_width, src);
        return pad_mirrored(x, pad_width, m, odd, src);
      },
      src);
}

Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width, std::string_view mode,
          std::string_view reflect_type, Loc src) {
  PadOptions options;
  options.reflect_type = reflect_type;
  return pad(a, std::move(pad_width), mode, options, src);
}

}  // namespace cjax::numpy
