// cjax::lax: one function per primitive, binding it with JAX's parameters (jax/_src/lax/lax.py,
// slicing.py) and the same shortcuts (e.g. a transpose by the identity permutation is no op):
// the lax library the autodiff rules use too (passes/lax/lax.h), over Arrays, with the caller's
// source location. No dtype promotion or rank broadcasting happens here; cjax::numpy adds those.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <span>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "ir/gather_params.h"
#include "ir/params.h"
#include "ir/source_info.h"

namespace cjax::lax {

// JAX's lax._convert_element_type: nothing when x already has this dtype and weak type; a C++
// number is converted on the host (constant folding); otherwise convert_element_type.
Array convert_element_type(const Array& x, DType new_dtype, bool weak_type = false,
                           SourceInfo src = std::source_location::current());

// Unary elementwise ops. The transcendental ones carry `accuracy=None`, as in JAX.
Array neg(const Array& x, SourceInfo src = std::source_location::current());
Array sign(const Array& x, SourceInfo src = std::source_location::current());
Array abs(const Array& x, SourceInfo src = std::source_location::current());
Array floor(const Array& x, SourceInfo src = std::source_location::current());
Array ceil(const Array& x, SourceInfo src = std::source_location::current());
Array exp(const Array& x, SourceInfo src = std::source_location::current());
Array exp2(const Array& x, SourceInfo src = std::source_location::current());
Array expm1(const Array& x, SourceInfo src = std::source_location::current());
Array log(const Array& x, SourceInfo src = std::source_location::current());
Array log1p(const Array& x, SourceInfo src = std::source_location::current());
Array sin(const Array& x, SourceInfo src = std::source_location::current());
Array cos(const Array& x, SourceInfo src = std::source_location::current());
Array tan(const Array& x, SourceInfo src = std::source_location::current());
Array tanh(const Array& x, SourceInfo src = std::source_location::current());
Array logistic(const Array& x, SourceInfo src = std::source_location::current());
Array sqrt(const Array& x, SourceInfo src = std::source_location::current());
Array rsqrt(const Array& x, SourceInfo src = std::source_location::current());
Array cbrt(const Array& x, SourceInfo src = std::source_location::current());
Array asin(const Array& x, SourceInfo src = std::source_location::current());
Array acos(const Array& x, SourceInfo src = std::source_location::current());
Array atan(const Array& x, SourceInfo src = std::source_location::current());
Array sinh(const Array& x, SourceInfo src = std::source_location::current());
Array cosh(const Array& x, SourceInfo src = std::source_location::current());
Array asinh(const Array& x, SourceInfo src = std::source_location::current());
Array acosh(const Array& x, SourceInfo src = std::source_location::current());
Array atanh(const Array& x, SourceInfo src = std::source_location::current());
Array erf(const Array& x, SourceInfo src = std::source_location::current());
Array erfc(const Array& x, SourceInfo src = std::source_location::current());
// The inverse of erf on (-1, 1): ±inf at ±1, NaN beyond (JAX's lax.erf_inv).
Array erf_inv(const Array& x, SourceInfo src = std::source_location::current());
// x, with no derivative flowing through it (JAX's lax.stop_gradient): binds stop_gradient on
// floating arrays; an integer or bool array, which has no tangent anyway, is returned as it is.
Array stop_gradient(const Array& x, SourceInfo src = std::source_location::current());
Array square(const Array& x, SourceInfo src = std::source_location::current());
Array bitwise_not(const Array& x, SourceInfo src = std::source_location::current());
Array is_finite(const Array& x, SourceInfo src = std::source_location::current());
Array integer_pow(const Array& x, int64_t y, SourceInfo src = std::source_location::current());

// Binary elementwise ops: operands of one dtype, scalars or of one rank (size-1 dims broadcast).
Array add(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array sub(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array mul(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array div(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array rem(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array pow(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array max(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array min(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array atan2(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
// The next float after x in the direction of y (C's nextafter), elementwise.
Array nextafter(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
// lax.clamp(min, x, max): x limited to [min, max]; min and max are scalars or of x's shape.
Array clamp(const Array& min, const Array& x, const Array& max,
            SourceInfo src = std::source_location::current());
Array bitwise_and(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array bitwise_or(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array bitwise_xor(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
// Shifts of integers of one dtype by amounts of that dtype (JAX's lax.shift_*): bits shifted past
// the width give 0 (or the sign, for an arithmetic right shift).
Array shift_left(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array shift_right_logical(const Array& x, const Array& y,
                          SourceInfo src = std::source_location::current());
Array shift_right_arithmetic(const Array& x, const Array& y,
                             SourceInfo src = std::source_location::current());
// The number of set bits of each integer.
Array population_count(const Array& x, SourceInfo src = std::source_location::current());
// The same bits read as `new_dtype` (JAX's lax.bitcast_convert_type; the interpreter and the
// back end convert between dtypes of one width).
Array bitcast_convert_type(const Array& x, DType new_dtype,
                           SourceInfo src = std::source_location::current());
Array eq(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array ne(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array lt(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array le(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array gt(const Array& x, const Array& y, SourceInfo src = std::source_location::current());
Array ge(const Array& x, const Array& y, SourceInfo src = std::source_location::current());

// select_n(which, *cases) and lax.select(pred, on_true, on_false) = select_n(pred, on_false,
// on_true).
Array select_n(const Array& which, std::span<const Array> cases,
               SourceInfo src = std::source_location::current());
Array select(const Array& pred, const Array& on_true, const Array& on_false,
             SourceInfo src = std::source_location::current());

// Shapes.
Array broadcast_in_dim(const Array& x, const Shape& shape, const std::vector<int64_t>& dims,
                       SourceInfo src = std::source_location::current());
// New leading dims of the given sizes.
Array broadcast(const Array& x, const Shape& sizes,
                SourceInfo src = std::source_location::current());
// Leading dims of size 1 up to `rank`.
Array broadcast_to_rank(const Array& x, int64_t rank,
                        SourceInfo src = std::source_location::current());
// lax.broadcast_to: NumPy-style (new leading dims, size-1 dims expanded).
Array broadcast_to(const Array& x, const Shape& shape,
                   SourceInfo src = std::source_location::current());
Array reshape(const Array& x, const Shape& new_sizes,
              std::optional<std::vector<int64_t>> dimensions = std::nullopt,
              SourceInfo src = std::source_location::current());
Array transpose(const Array& x, const std::vector<int64_t>& permutation,
                SourceInfo src = std::source_location::current());
Array squeeze(const Array& x, const std::vector<int64_t>& dimensions,
              SourceInfo src = std::source_location::current());
Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions,
                  SourceInfo src = std::source_location::current());
Array concatenate(std::span<const Array> operands, int64_t dimension,
                  SourceInfo src = std::source_location::current());
Array iota(DType dtype, int64_t size, SourceInfo src = std::source_location::current());
Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension,
                       SourceInfo src = std::source_location::current());
// lax.full: the fill value (a scalar, converted to `dtype` when given) broadcast to `shape`.
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype = std::nullopt,
           SourceInfo src = std::source_location::current());
// lax.full_like(x, fill_value, dtype, shape).
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype = std::nullopt,
                std::optional<Shape> shape = std::nullopt,
                SourceInfo src = std::source_location::current());

// Slicing.
Array slice(const Array& x, const std::vector<int64_t>& start_indices,
            const std::vector<int64_t>& limit_indices,
            std::optional<std::vector<int64_t>> strides = std::nullopt,
            SourceInfo src = std::source_location::current());
// Start indices are scalar integer Arrays (or C++ ints); negative ones count from the end.
Array dynamic_slice(const Array& x, std::span<const Array> start_indices,
                    const std::vector<int64_t>& slice_sizes,
                    SourceInfo src = std::source_location::current());
// lax.dynamic_update_slice: `update` written into x at the start indices (clamped so that it
// fits; negative ones count from the end).
Array dynamic_update_slice(const Array& x, const Array& update,
                           std::span<const Array> start_indices,
                           SourceInfo src = std::source_location::current());

// lax.gather's keywords. An unset mode is PROMISE_IN_BOUNDS (lax.gather's None); fill_value is
// used by FILL_OR_DROP only (unset: NaN for floats, the dtype's extreme for integers).
struct GatherOptions {
  bool unique_indices = false;
  bool indices_are_sorted = false;
  std::optional<GatherScatterMode> mode;
  std::optional<double> fill_value;
};
// lax.gather (XLA's Gather; the index vector is the last dimension of `indices`).
Array gather(const Array& operand, const Array& indices, const GatherDimensionNumbers& dn,
             const std::vector<int64_t>& slice_sizes, const GatherOptions& options = {},
             SourceInfo src = std::source_location::current());

// The scatters' keywords. An unset mode is FILL_OR_DROP (lax.scatter*'s None): an update whose
// window leaves the operand is dropped.
struct ScatterOptions {
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<GatherScatterMode> mode;
};
// lax.scatter (replaces), scatter_add, scatter_mul, scatter_min, scatter_max (XLA's Scatter).
Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterDimensionNumbers& dn, const ScatterOptions& options = {},
              SourceInfo src = std::source_location::current());
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options = {},
                  SourceInfo src = std::source_location::current());
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options = {},
                  SourceInfo src = std::source_location::current());
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options = {},
                  SourceInfo src = std::source_location::current());
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options = {},
                  SourceInfo src = std::source_location::current());

// Reductions over `axes` (no keepdims).
Array reduce_sum(const Array& x, const std::vector<int64_t>& axes,
                 SourceInfo src = std::source_location::current());
Array reduce_max(const Array& x, const std::vector<int64_t>& axes,
                 SourceInfo src = std::source_location::current());
Array reduce_min(const Array& x, const std::vector<int64_t>& axes,
                 SourceInfo src = std::source_location::current());
Array reduce_prod(const Array& x, const std::vector<int64_t>& axes,
                  SourceInfo src = std::source_location::current());
Array reduce_or(const Array& x, const std::vector<int64_t>& axes,
                SourceInfo src = std::source_location::current());
Array reduce_and(const Array& x, const std::vector<int64_t>& axes,
                 SourceInfo src = std::source_location::current());
Array argmax(const Array& x, int64_t axis, DType index_dtype,
             SourceInfo src = std::source_location::current());
Array argmin(const Array& x, int64_t axis, DType index_dtype,
             SourceInfo src = std::source_location::current());

// lax.cumsum: running sums along `axis` (from the end when `reverse`).
Array cumsum(const Array& x, int64_t axis = 0, bool reverse = false,
             SourceInfo src = std::source_location::current());
Array cumprod(const Array& x, int64_t axis = 0, bool reverse = false,
              SourceInfo src = std::source_location::current());
// lax.split: x cut along `axis` into pieces of `sizes` (which sum to that axis's size).
std::vector<Array> split(const Array& x, const std::vector<int64_t>& sizes, int64_t axis = 0,
                         SourceInfo src = std::source_location::current());

// JAX's lax.sort: the operands (of one shape) sorted together along `dimension`, ordered by the
// first num_keys of them lexicographically; floats in a total order (-0.0 equals 0.0, NaNs last).
std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension = -1,
                        bool is_stable = true, int64_t num_keys = 1,
                        SourceInfo src = std::source_location::current());
Array sort(const Array& x, int64_t dimension = -1, bool is_stable = true,
           SourceInfo src = std::source_location::current());
// JAX's lax.rev: x with the listed dimensions reversed.
Array rev(const Array& x, const std::vector<int64_t>& dimensions,
          SourceInfo src = std::source_location::current());

// dot_general with dimension numbers ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)).
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type = std::nullopt,
                  SourceInfo src = std::source_location::current());

// lax.top_k: the k largest elements along `axis` (the last by default), largest first, and their
// indices (i32); equal elements keep their order.
std::pair<Array, Array> top_k(const Array& x, int64_t k, int64_t axis = -1,
                              SourceInfo src = std::source_location::current());

// Normalises a possibly negative axis; throws a located TypeError naming `op` when out of range.
int64_t canonicalize_axis(int64_t axis, int64_t rank, std::string_view op, const SourceInfo& src);

}  // namespace cjax::lax
