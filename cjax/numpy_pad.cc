// jnp.pad in its constant mode (jax/_src/numpy/lax_numpy.py: pad, _pad_constant): JAX's
// `jit[name=_pad]` over the array and the constant, with the widths as numpy ints.
#include <fmt/format.h>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/trace_emitter.h"
#include "passes/lax/lax.h"

namespace cjax::numpy {

Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width,
          const Array& constant_values, Loc src) {
  // _broadcast_to_pairs: one pair stands for every axis.
  if (pad_width.size() == 1 && a.ndim() != 1)
    pad_width.assign(static_cast<size_t>(a.ndim()), pad_width[0]);
  if (static_cast<int64_t>(pad_width.size()) != a.ndim())
    throw_type_error(src, fmt::format("pad: {} (before, after) pairs for an array of {} "
                                      "dimensions",
                                      pad_width.size(), a.ndim()));
  for (const auto& [lo, hi] : pad_width)
    if (lo < 0 || hi < 0) throw_type_error(src, "pad: index can't contain negative values");
  if (constant_values.ndim() != 0)
    throw UnsupportedError(location_prefix(src) +
                           "pad: constant_values must be a scalar (per-axis values are not "
                           "supported)");
  auto impl = [=](std::span<const Array> args) -> std::vector<Array> {
    const Array& x = args[0];
    const Array value = lax::convert_element_type(args[1], x.dtype(), x.weak_type(), src);
    ParamTuple config;
    for (const auto& [lo, hi] : pad_width)
      config.items.push_back(
          ParamTuple{{ParamValue::np_int(lo), ParamValue::np_int(hi), ParamValue(int64_t{0})}});
    TraceEmitter e(src);
    return {lax_ops::emit1(e, "pad", {x, value}, {{"padding_config", std::move(config)}})};
  };
  Array args[] = {a, constant_values};
  return detail::call_jitted("_pad", impl, args, src)[0];
}

Array pad(const Array& a, int64_t width, const Array& constant_values, Loc src) {
  return pad(a, {{width, width}}, constant_values, src);
}

}  // namespace cjax::numpy
