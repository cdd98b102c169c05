// cjax::numpy: jax.numpy for C++. Each function traces to the equations jax.numpy emits for the
// same call (dtype promotion with weak types, NumPy rank promotion through broadcast_in_dim, the
// same lax primitives and params); see jax/_src/numpy/{ufuncs,lax_numpy,reductions,
// tensor_contractions,array_creation}.py. Every function takes the caller's location as its last,
// defaulted parameter and records it on each equation it emits, so composite ops point at the
// user's line. A C++ number passed as an Array is a weak-typed scalar (JAX's Python scalar).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax::numpy {

using Loc = SourceInfo;
#define CJAX_LOC ::cjax::SourceInfo src = std::source_location::current()

// The `axis` argument of reductions: None (all axes), one axis, or several.
class Axis {
 public:
  Axis() = default;                                                                 // None
  Axis(std::nullopt_t) {}                                                           // NOLINT
  Axis(int axis) : axes_(std::vector<int64_t>{axis}) {}                             // NOLINT
  Axis(int64_t axis) : axes_(std::vector<int64_t>{axis}) {}                         // NOLINT
  Axis(std::initializer_list<int64_t> axes) : axes_(std::vector<int64_t>(axes)) {}  // NOLINT
  Axis(std::vector<int64_t> axes) : axes_(std::move(axes)) {}                       // NOLINT
  bool is_none() const { return !axes_.has_value(); }
  const std::vector<int64_t>& axes() const { return *axes_; }

 private:
  std::optional<std::vector<int64_t>> axes_;
};

// ---- elementwise, unary
// ----------------------------------------------------------------------------
Array negative(const Array& x, CJAX_LOC);
Array positive(const Array& x, CJAX_LOC);
Array sign(const Array& x, CJAX_LOC);
Array abs(const Array& x, CJAX_LOC);
Array absolute(const Array& x, CJAX_LOC);
Array square(const Array& x, CJAX_LOC);
Array reciprocal(const Array& x, CJAX_LOC);  // integer_pow[y=-1]
Array floor(const Array& x, CJAX_LOC);
Array ceil(const Array& x, CJAX_LOC);
Array sqrt(const Array& x, CJAX_LOC);
Array rsqrt(const Array& x, CJAX_LOC);  // jax.lax.rsqrt (integers promoted to float)
Array cbrt(const Array& x, CJAX_LOC);
Array exp(const Array& x, CJAX_LOC);
Array exp2(const Array& x, CJAX_LOC);
Array expm1(const Array& x, CJAX_LOC);
Array log(const Array& x, CJAX_LOC);
Array log1p(const Array& x, CJAX_LOC);
Array sin(const Array& x, CJAX_LOC);
Array cos(const Array& x, CJAX_LOC);
Array tan(const Array& x, CJAX_LOC);
Array tanh(const Array& x, CJAX_LOC);
Array arcsin(const Array& x, CJAX_LOC);
Array arccos(const Array& x, CJAX_LOC);
Array arctan(const Array& x, CJAX_LOC);
Array sinh(const Array& x, CJAX_LOC);
Array cosh(const Array& x, CJAX_LOC);
Array arcsinh(const Array& x, CJAX_LOC);
Array arctanh(const Array& x, CJAX_LOC);
Array erf(const Array& x, CJAX_LOC);  // jax.scipy.special.erf
Array logical_not(const Array& x, CJAX_LOC);

// ---- elementwise, binary (NumPy broadcasting and dtype promotion)
// -----------------------------------
Array add(const Array& x, const Array& y, CJAX_LOC);
Array subtract(const Array& x, const Array& y, CJAX_LOC);
Array multiply(const Array& x, const Array& y, CJAX_LOC);
Array divide(const Array& x, const Array& y, CJAX_LOC);
Array true_divide(const Array& x, const Array& y, CJAX_LOC);
// x ** y: a C++ integer (or concrete integer scalar) exponent gives integer_pow[y=n], as jnp does.
Array power(const Array& x, const Array& y, CJAX_LOC);
Array maximum(const Array& x, const Array& y, CJAX_LOC);
Array minimum(const Array& x, const Array& y, CJAX_LOC);
Array arctan2(const Array& x, const Array& y, CJAX_LOC);
Array equal(const Array& x, const Array& y, CJAX_LOC);
Array not_equal(const Array& x, const Array& y, CJAX_LOC);
Array less(const Array& x, const Array& y, CJAX_LOC);
Array less_equal(const Array& x, const Array& y, CJAX_LOC);
Array greater(const Array& x, const Array& y, CJAX_LOC);
Array greater_equal(const Array& x, const Array& y, CJAX_LOC);
Array logical_and(const Array& x, const Array& y, CJAX_LOC);
Array logical_or(const Array& x, const Array& y, CJAX_LOC);
// jnp.where(condition, x, y). JAX wraps it in `jit[name=_where]`; so does cjax while tracing
// (when the jit primitive is available), and it runs inline otherwise.
Array where(const Array& condition, const Array& x, const Array& y, CJAX_LOC);
// jnp.clip(x, min, max) with optional bounds.
Array clip(const Array& x, std::optional<Array> min, std::optional<Array> max, CJAX_LOC);

// ---- reductions
// -------------------------------------------------------------------------------------
Array sum(const Array& a, Axis axis = {}, bool keepdims = false,
          std::optional<DType> dtype = std::nullopt, CJAX_LOC);
Array prod(const Array& a, Axis axis = {}, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt, CJAX_LOC);
Array mean(const Array& a, Axis axis = {}, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt, CJAX_LOC);
Array max(const Array& a, Axis axis = {}, bool keepdims = false, CJAX_LOC);
Array min(const Array& a, Axis axis = {}, bool keepdims = false, CJAX_LOC);
// jnp.any / jnp.all: whether any / every element along `axis` is nonzero (reduce_or/reduce_and
// over the array cast to bool).
Array any(const Array& a, Axis axis = {}, bool keepdims = false, CJAX_LOC);
Array all(const Array& a, Axis axis = {}, bool keepdims = false, CJAX_LOC);
Array argmax(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
             CJAX_LOC);
Array argmin(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
             CJAX_LOC);
// jnp.var / jnp.std over `axis` with `ddof` degrees of freedom removed (NaN where N - ddof <= 0);
// jitted as JAX's: `jit[name=_var]`, `jit[name=_std]`.
Array var(const Array& a, Axis axis = {}, int64_t ddof = 0, bool keepdims = false, CJAX_LOC);
Array std(const Array& a, Axis axis = {}, int64_t ddof = 0, bool keepdims = false, CJAX_LOC);
// jnp.cumsum / jnp.cumprod along `axis` (the flattened array for nullopt); `jit[name=cumsum]`.
Array cumsum(const Array& a, std::optional<int64_t> axis = std::nullopt, CJAX_LOC);
Array cumprod(const Array& a, std::optional<int64_t> axis = std::nullopt, CJAX_LOC);
// jnp.quantile / jnp.percentile / jnp.median along `axis` (one, several, or all for None), as
// JAX's _quantile: sorted, the two neighbouring order statistics gathered and combined by
// `method` ("linear", "lower", "higher", "midpoint" or "nearest"); any NaN along the axis gives
// NaN. `q` is a scalar or a vector (its axis leads the result). Jitted as JAX's: `jit[name=
// quantile]`, `percentile` (q in 0..100), `median` (method "midpoint").
Array quantile(const Array& a, const Array& q, Axis axis = {}, std::string_view method = "linear",
               bool keepdims = false, CJAX_LOC);
Array percentile(const Array& a, const Array& q, Axis axis = {}, std::string_view method = "linear",
                 bool keepdims = false, CJAX_LOC);
Array median(const Array& a, Axis axis = {}, bool keepdims = false, CJAX_LOC);
// jnp.nanquantile / nanpercentile / nanmedian: the same, NaNs ignored (each row's quantiles are
// of its non-NaN values; a row of NaNs gives NaN). Jitted as `nanquantile`, `nanpercentile`,
// `nanmedian`.
Array nanquantile(const Array& a, const Array& q, Axis axis = {},
                  std::string_view method = "linear", bool keepdims = false, CJAX_LOC);
Array nanpercentile(const Array& a, const Array& q, Axis axis = {},
                    std::string_view method = "linear", bool keepdims = false, CJAX_LOC);
Array nanmedian(const Array& a, Axis axis = {}, bool keepdims = false, CJAX_LOC);
// jnp.apply_along_axis: func1d applied to every 1-D vector along `axis` (vmapped over the other
// axes, as JAX's); its result's axes take the place of `axis`.
Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int64_t axis,
                       const Array& arr, CJAX_LOC);
// jnp.sort / jnp.argsort along `axis` (the flattened array for nullopt), ascending unless
// `descending`; `stable` keeps equal elements in their order (argsort's descending order too).
// Jitted as JAX's are: `jit[name=sort]` / `jit[name=argsort]`.
Array sort(const Array& a, std::optional<int64_t> axis = -1, bool stable = true,
           bool descending = false, CJAX_LOC);
Array argsort(const Array& a, std::optional<int64_t> axis = -1, bool stable = true,
              bool descending = false, CJAX_LOC);

// ---- shapes
// ------------------------------------------------------------------------------------------ One
// dimension may be -1 (inferred).
Array reshape(const Array& a, const Shape& shape, CJAX_LOC);
Array ravel(const Array& a, CJAX_LOC);
// jnp.copy (and jnp.array of a traced value): a `copy` eqn, a new buffer with a's values.
Array copy(const Array& a, CJAX_LOC);
// Reverses the axes when `axes` is not given; `transpose(x, {0, 2, 1, 3})` takes a brace list.
Array transpose(const Array& a, std::optional<std::vector<int64_t>> axes = std::nullopt, CJAX_LOC);
Array transpose(const Array& a, std::initializer_list<int64_t> axes, CJAX_LOC);
// jnp.split into `sections` equal parts along `axis` (an error when they cannot be equal), or at
// the given indices; jnp.array_split allows unequal parts (the first ones one longer). One
// `split` eqn, as JAX's.
std::vector<Array> split(const Array& a, int64_t sections, int64_t axis = 0, CJAX_LOC);
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int64_t axis = 0,
                         CJAX_LOC);
std::vector<Array> array_split(const Array& a, int64_t sections, int64_t axis = 0, CJAX_LOC);
// jnp.tril / jnp.triu: the last two axes' lower (upper) triangle from diagonal k, zeros elsewhere;
// jitted as JAX's.
Array tril(const Array& m, int64_t k = 0, CJAX_LOC);
Array triu(const Array& m, int64_t k = 0, CJAX_LOC);
Array matrix_transpose(const Array& a, CJAX_LOC);
Array swapaxes(const Array& a, int64_t axis1, int64_t axis2, CJAX_LOC);
Array broadcast_to(const Array& a, const Shape& shape, CJAX_LOC);
Array squeeze(const Array& a, Axis axis = {}, CJAX_LOC);
Array expand_dims(const Array& a, const std::vector<int64_t>& axis, CJAX_LOC);
Array concatenate(const std::vector<Array>& arrays, int64_t axis = 0, CJAX_LOC);
Array stack(const std::vector<Array>& arrays, int64_t axis = 0, CJAX_LOC);
Array astype(const Array& a, DType dtype, CJAX_LOC);
// jnp.pad(a, pad_width, constant_values=...) in constant mode: one (before, after) pair per
// axis, or one pair (or one width) for every axis; `jit[name=_pad]` as JAX's.
Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width,
          const Array& constant_values = 0, CJAX_LOC);
Array pad(const Array& a, int64_t width, const Array& constant_values = 0, CJAX_LOC);
// jnp.pad's keywords, each for its modes (another mode given one is refused, as JAX refuses it).
struct PadOptions {
  Array constant_values = 0;                               // "constant"
  std::vector<std::pair<int64_t, int64_t>> stat_length{};  // the statistic modes; empty: all
  std::vector<std::pair<Array, Array>> end_values{};       // "linear_ramp"; empty: 0
  std::string_view reflect_type = "even";                  // "reflect", "symmetric"
};
// jnp.pad with a function as the mode, NumPy's padding_func(vector, iaxis_pad_width, iaxis): the
// array is first padded with zeros, then each axis in turn has `func` applied along it (JAX's
// apply_along_axis, so vmapped), to every 1-D vector of that axis; it returns the vector with its
// padded ends filled in (JAX, unlike NumPy, cannot fill them in place).
//   jnp::pad(x, {{2, 3}}, [](const Array& v, std::pair<int64_t, int64_t> w, int64_t axis) {...})
using PadFunction =
    std::function<Array(const Array& vector, std::pair<int64_t, int64_t> pad_width, int64_t axis)>;
Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width,
          const PadFunction& mode, CJAX_LOC);
// jnp.pad(a, pad_width, mode, ...): mode "constant", "edge", "wrap", "reflect" or "symmetric"
// (reflect_type "even" or "odd"), "linear_ramp" (jnp.linspace from each axis' end values, one
// pair per axis or one for all, to the edge), or a statistic, "maximum", "minimum", "mean" or
// "median", of each axis' first and last stat_length elements (the whole axis by default),
// rounded to even for integer arrays; "empty" (zeros, as JAX's). Built as JAX builds them (slices,
// flips, linspaces, reductions and concatenations), so they differentiate and compile as those do:
//   jnp::pad(x, {{2, 3}}, "linear_ramp", {.end_values = {{0, 1.5}}})
//   jnp::pad(x, {{2, 3}}, "mean", {.stat_length = {{1, 2}}})
Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width, std::string_view mode,
          const PadOptions& options, CJAX_LOC);
Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width, std::string_view mode,
          std::string_view reflect_type = "even", CJAX_LOC);

// ---- linear algebra
// ----------------------------------------------------------------------------------- dot_general
// with preferred_element_type = the promoted dtype, as jnp.dot / jnp.matmul.
Array dot(const Array& a, const Array& b, CJAX_LOC);
Array matmul(const Array& a, const Array& b, CJAX_LOC);
// jnp.einsum("bhqd,bhkd->bhqk", {q, k}): 1 to 4 operands, ellipses and the implicit output
// included, contracted pairwise in opt_einsum's optimal order as JAX does (docs/numpy.md).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands, CJAX_LOC);
// jnp.tensordot: the last `axes` dims of a with the first of b, or the listed axes.
Array tensordot(const Array& a, const Array& b, int64_t axes = 2, CJAX_LOC);
Array tensordot(const Array& a, const Array& b, const std::vector<int64_t>& a_axes,
                const std::vector<int64_t>& b_axes, CJAX_LOC);

// ---- creation
// ------------------------------------------------------------------------------------------
Array zeros(const Shape& shape, DType dtype = DType::f32, CJAX_LOC);
Array ones(const Shape& shape, DType dtype = DType::f32, CJAX_LOC);
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype = std::nullopt,
           CJAX_LOC);
Array zeros_like(const Array& a, std::optional<DType> dtype = std::nullopt, CJAX_LOC);
Array ones_like(const Array& a, std::optional<DType> dtype = std::nullopt, CJAX_LOC);
Array full_like(const Array& a, const Array& fill_value, std::optional<DType> dtype = std::nullopt,
                CJAX_LOC);
// jnp.arange(stop) / arange(start, stop) / arange(start, stop, step); the dtype defaults to the
// promoted type of the (C++ number) arguments: ints give i32, floating point gives f32.
Array arange(const Array& stop, CJAX_LOC);
Array arange(const Array& start, const Array& stop, std::optional<Array> step = std::nullopt,
             std::optional<DType> dtype = std::nullopt, CJAX_LOC);
// jnp.linspace: `num` evenly spaced values from start to stop (included unless !endpoint), along
// a new axis `axis` (leading by default) when the bounds are arrays; an integer dtype rounds the
// samples down. JAX's `jit[name=_linspace]`.
Array linspace(const Array& start, const Array& stop, int64_t num = 50, bool endpoint = true,
               std::optional<DType> dtype = std::nullopt, int64_t axis = 0, CJAX_LOC);

// ---- indexing
// --------------------------------------------------------------------------------------------
// a[index]: integers, slices, ellipsis and newaxis give slice / squeeze / broadcast_in_dim; a
// scalar integer Array gives a dynamic_slice; integer arrays of rank > 0 (NumPy's advanced
// indexing, broadcast together; negative entries count from the end) give a gather, in
// PROMISE_IN_BOUNDS mode as JAX's (out-of-bounds indices are clamped). Boolean masks are not
// supported.
Array getitem(const Array& a, const std::vector<Index>& index, CJAX_LOC);

// jnp.take(a, indices, axis, mode, fill_value): elements of `a` along `axis` (the flattened
// array without one). mode "fill" (the default) reads fill_value (NaN for floats) where an index
// is out of bounds, "clip" clamps, "wrap" wraps, "promise_in_bounds" trusts the indices.
Array take(const Array& a, const Array& indices, std::optional<int64_t> axis = std::nullopt,
           const std::string& mode = "fill", std::optional<double> fill_value = std::nullopt,
           CJAX_LOC);
// jnp.take_along_axis(arr, indices, axis, mode, fill_value): indices of arr's rank (dims other
// than `axis` broadcast), e.g. the values at argsort's or argmax's positions.
Array take_along_axis(const Array& arr, const Array& indices, std::optional<int64_t> axis,
                      const std::string& mode = "fill",
                      std::optional<double> fill_value = std::nullopt, CJAX_LOC);

}  // namespace cjax::numpy

#undef CJAX_LOC

namespace cjax {
namespace np = numpy;
}
