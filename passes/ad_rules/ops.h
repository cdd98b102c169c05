// The lax functions JAX's autodiff rules call, as emitters. Each binds the params JAX binds and
// skips the eqn exactly where JAX does (lax.reshape of an equal shape, lax.transpose by the
// identity, staging's forwarding of a same-shape broadcast_in_dim or a same-type
// convert_element_type, constant folding of a converted scalar literal), so the rules below
// emit JAX's eqn sequences. Operands are evaluated by the caller in JAX's (left-to-right) order:
// every rule names its intermediate values instead of nesting calls, because C++ leaves the
// order of argument evaluation unspecified.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "passes/builder.h"

namespace cjax::ad {

// --- constants ----------------------------------------------------------------------------------

// JAX's `_const(x, v)`: a non-weak scalar literal of x's dtype.
Atom const_like(const Atom& x, double v);
// JAX's `_one(x)` / `_zero(x)`: a scalar literal of x's dtype, weak when x is.
Atom one_like(const Atom& x);
Atom zero_like(const Atom& x);
// JAX's `full_like(x, v)`: v in x's shape and dtype (a literal for rank 0, else a broadcast).
Atom full_like(JaxprBuilder& b, const Atom& x, double v);
// `full_like(x, v, shape=shape)`.
Atom full_like(JaxprBuilder& b, const Atom& x, double v, const Shape& shape);
// `lax.full(shape, v, dtype)`: a non-weak fill.
Atom full(JaxprBuilder& b, const Shape& shape, double v, DType dtype);
// JAX's `zeros_like_aval` (instantiated symbolic zeros).
Atom zeros_like_aval(JaxprBuilder& b, const ShapedArray& aval);

// --- elementwise --------------------------------------------------------------------------------

Atom unop(JaxprBuilder& b, std::string_view prim, const Atom& x);
// Unary ops that bind `accuracy` (exp, log, sin, tanh, ...); None unless given.
Atom unop_acc(JaxprBuilder& b, std::string_view prim, const Atom& x,
              const ParamValue* accuracy = nullptr);
Atom binop(JaxprBuilder& b, std::string_view prim, const Atom& x, const Atom& y);

Atom neg(JaxprBuilder& b, const Atom& x);
Atom sign(JaxprBuilder& b, const Atom& x);
Atom floor(JaxprBuilder& b, const Atom& x);
Atom abs(JaxprBuilder& b, const Atom& x);
Atom square(JaxprBuilder& b, const Atom& x);
Atom integer_pow(JaxprBuilder& b, const Atom& x, int64_t y);
Atom reciprocal(JaxprBuilder& b, const Atom& x);  // integer_pow(x, -1)
Atom exp(JaxprBuilder& b, const Atom& x, const ParamValue* accuracy = nullptr);
Atom log(JaxprBuilder& b, const Atom& x, const ParamValue* accuracy = nullptr);

Atom add(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom sub(JaxprBuilder& b, const Atom& x, const Atom& y);
// mul binds `out_dtype` (None unless given), as lax.mul does.
Atom mul(JaxprBuilder& b, const Atom& x, const Atom& y, const ParamValue& out_dtype = NoneParam{});
Atom div(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom pow(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom max(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom eq(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom ne(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom lt(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom gt(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom ge(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom bitwise_and(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom bitwise_or(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom add_any(JaxprBuilder& b, const Atom& x, const Atom& y);

Atom select_n(JaxprBuilder& b, const Atom& which, const std::vector<Atom>& cases);
// lax.select(pred, on_true, on_false) = select_n(pred, on_false, on_true).
Atom select(JaxprBuilder& b, const Atom& pred, const Atom& on_true, const Atom& on_false);

// lax.convert_element_type / _convert_element_type: folds a scalar literal; returns x when its
// dtype and weak type already match (JAX's forwarding rule).
Atom convert_element_type(JaxprBuilder& b, const Atom& x, DType dtype, bool weak_type = false);

// --- structural ---------------------------------------------------------------------------------

// broadcast_in_dim, skipped when the shape is unchanged (lax's early return for rank 0, staging's
// forwarding rule otherwise).
Atom broadcast_in_dim(JaxprBuilder& b, const Atom& x, const Shape& shape,
                      const std::vector<int64_t>& broadcast_dimensions);
// lax.broadcast: new leading dims.
Atom broadcast(JaxprBuilder& b, const Atom& x, const Shape& sizes);
// lax.reshape: skipped only for an unchanged shape of rank >= 1 (a rank-0 reshape is bound).
// `dimensions` transposes first (None when it is the identity).
Atom reshape(JaxprBuilder& b, const Atom& x, const Shape& new_sizes,
             const std::optional<std::vector<int64_t>>& dimensions = std::nullopt);
// reduce_sum: always bound, even over no axes.
Atom reduce_sum(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes);
Atom transpose(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& permutation);
Atom squeeze(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& dimensions);
Atom expand_dims(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& dimensions);
Atom concatenate(JaxprBuilder& b, const std::vector<Atom>& xs, int64_t dimension);

struct PadDim {
  int64_t lo, hi, interior;
};
Atom pad(JaxprBuilder& b, const Atom& x, const Atom& padding_value,
         const std::vector<PadDim>& config);
// `strides` empty: None.
Atom slice(JaxprBuilder& b, const Atom& x, const Shape& start, const Shape& limit,
           const std::vector<int64_t>& strides = {});
// lax.slicing.slice_in_dim (negative indices counted from the end; strides always bound).
Atom slice_in_dim(JaxprBuilder& b, const Atom& x, int64_t start, std::optional<int64_t> limit,
                  int64_t stride, int64_t axis);
Atom dynamic_slice(JaxprBuilder& b, const Atom& x, const std::vector<Atom>& start,
                   const Shape& sizes);
Atom dynamic_update_slice(JaxprBuilder& b, const Atom& x, const Atom& update,
                          const std::vector<Atom>& start);

// JAX's broadcast_shapes of two operand shapes (rank 0 or size-1 dims broadcast).
Shape broadcast_shapes(const Shape& x, const Shape& y);

}  // namespace cjax::ad
