// jnp.var / jnp.std and the cumulative reductions jnp.cumsum / jnp.cumprod, jitted as JAX's are
// (`jit[name=_var]`, `_std`, `cumsum`, `cumprod`), so they print JAX's jaxprs.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"

namespace cjax::numpy {
namespace {

// jnp's _var body: the mean-centred squares summed over `axis` and divided by N - ddof (NaN where
// that is not positive), computed in the array's inexact dtype.
Array var_body(const Array& in, const Array& ddof, const Axis& axis, bool keepdims,
               const Loc& src) {
  const DType dtype = to_inexact_dtype(in.dtype());
  const Array a = astype(in, dtype, src);
  const Array centered = lax::square(lax::sub(a, mean(a, axis, true, std::nullopt, src), src), src);
  double count = 1;
  for (int64_t d : detail::reduction_axes("var", a, axis, src))
    count *= static_cast<double>(a.shape()[size_t(d)]);
  const Array normalizer = lax::sub(lax::convert_element_type(count, dtype, false, src),
                                    lax::convert_element_type(ddof, dtype, false, src), src);
  const Array total = lax::div(sum(centered, axis, keepdims, std::nullopt, src), normalizer, src);
  return where(greater(normalizer, 0, src), total, std::numeric_limits<double>::quiet_NaN(), src);
}

Array jitted_var(const Array& a, const Array& ddof, const Axis& axis, bool keepdims,
                 const Loc& src) {
  auto impl = [&](std::span<const Array> args) -> std::vector<Array> {
    return {var_body(args[0], args[1], axis, keepdims, src)};
  };
  return detail::call_jitted("_var", impl, std::vector<Array>{a, ddof}, src)[0];
}

// jnp.cumsum / cumprod: jitted, the flattened array for axis None, bools summed as integers.
Array cumulative(const char* name, const Array& a, std::optional<int64_t> axis, const Loc& src) {
  auto impl = [&](std::span<const Array> args) -> std::vector<Array> {
    Array x = axis ? args[0] : ravel(args[0], src);
    if (x.dtype() == DType::bool_) x = astype(x, DType::i32, src);
    if (x.ndim() == 0)
      throw TypeError(
          fmt::format("{}: the array must have at least one axis ({})", name, src.summarize()));
    const int64_t ax = lax::canonicalize_axis(axis.value_or(0), x.ndim(), name, src);
    return {std::string_view(name) == "cumsum" ? lax::cumsum(x, ax, false, src)
                                               : lax::cumprod(x, ax, false, src)};
  };
  return detail::call_jitted(name, impl, std::vector<Array>{a}, src)[0];
}

}  // namespace

Array var(const Array& a, Axis axis, int64_t ddof, bool keepdims, Loc src) {
  return jitted_var(a, Array(ddof), axis, keepdims, src);
}

Array std(const Array& a, Axis axis, int64_t ddof, bool keepdims, Loc src) {
  auto impl = [&](std::span<const Array> args) -> std::vector<Array> {
    return {lax::sqrt(jitted_var(args[0], args[1], axis, keepdims, src), src)};
  };
  return detail::call_jitted("_std", impl, std::vector<Array>{a, Array(ddof)}, src)[0];
}

Array cumsum(const Array& a, std::optional<int64_t> axis, Loc src) {
  return cumulative("cumsum", a, axis, src);
}

Array cumprod(const Array& a, std::optional<int64_t> axis, Loc src) {
  return cumulative("cumprod", a, axis, src);
}

}  // namespace cjax::numpy
