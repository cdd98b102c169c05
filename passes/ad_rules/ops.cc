#include "passes/ad_rules/ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ir/errors.h"
#include "ir/lax_params.h"

namespace cjax::ad {

// --- constants ----------------------------------------------------------------------------------

Atom const_like(const Atom& x, double v) {
  return Literal::of(v, x.aval().dtype);
}
Atom one_like(const Atom& x) {
  return Literal::of(1.0, x.aval().dtype, x.aval().weak_type);
}
Atom zero_like(const Atom& x) {
  return Literal::of(0.0, x.aval().dtype, x.aval().weak_type);
}

namespace {

Atom fill(JaxprBuilder& b, const Shape& shape, double v, DType dtype, bool weak) {
  Atom scalar = Literal::of(v, dtype, weak);
  if (shape.empty()) return scalar;
  return broadcast_in_dim(b, scalar, shape, {});
}

}  // namespace

Atom full_like(JaxprBuilder& b, const Atom& x, double v) {
  return fill(b, x.aval().shape, v, x.aval().dtype, x.aval().weak_type);
}

Atom full_like(JaxprBuilder& b, const Atom& x, double v, const Shape& shape) {
  return fill(b, shape, v, x.aval().dtype, x.aval().weak_type);
}

Atom full(JaxprBuilder& b, const Shape& shape, double v, DType dtype) {
  return fill(b, shape, v, dtype, false);
}

Atom zeros_like_aval(JaxprBuilder& b, const ShapedArray& aval) {
  return fill(b, aval.shape, 0.0, aval.dtype, aval.weak_type);
}

// --- elementwise --------------------------------------------------------------------------------

Atom unop(JaxprBuilder& b, std::string_view prim, const Atom& x) {
  return b.emit1(prim, {x});
}

Atom unop_acc(JaxprBuilder& b, std::string_view prim, const Atom& x, const ParamValue* accuracy) {
  return b.emit1(prim, {x}, {{"accuracy", accuracy ? *accuracy : ParamValue(NoneParam{})}});
}

Atom binop(JaxprBuilder& b, std::string_view prim, const Atom& x, const Atom& y) {
  return b.emit1(prim, {x, y});
}

Atom neg(JaxprBuilder& b, const Atom& x) {
  return unop(b, "neg", x);
}
Atom sign(JaxprBuilder& b, const Atom& x) {
  return unop(b, "sign", x);
}
Atom floor(JaxprBuilder& b, const Atom& x) {
  return unop(b, "floor", x);
}
Atom abs(JaxprBuilder& b, const Atom& x) {
  return unop(b, "abs", x);
}
Atom square(JaxprBuilder& b, const Atom& x) {
  return unop(b, "square", x);
}
Atom integer_pow(JaxprBuilder& b, const Atom& x, int64_t y) {
  return b.emit1("integer_pow", {x}, lax_params::integer_pow(y));
}
Atom reciprocal(JaxprBuilder& b, const Atom& x) {
  return integer_pow(b, x, -1);
}
Atom exp(JaxprBuilder& b, const Atom& x, const ParamValue* accuracy) {
  return unop_acc(b, "exp", x, accuracy);
}
Atom log(JaxprBuilder& b, const Atom& x, const ParamValue* accuracy) {
  return unop_acc(b, "log", x, accuracy);
}

Atom add(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "add", x, y);
}
Atom sub(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "sub", x, y);
}
Atom mul(JaxprBuilder& b, const Atom& x, const Atom& y, const ParamValue& out_dtype) {
  return b.emit1("mul", {x, y}, {{"out_dtype", out_dtype}});
}
Atom div(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "div", x, y);
}
Atom pow(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "pow", x, y);
}
Atom max(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "max", x, y);
}
Atom eq(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "eq", x, y);
}
Atom ne(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "ne", x, y);
}
Atom lt(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "lt", x, y);
}
Atom gt(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "gt", x, y);
}
Atom ge(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "ge", x, y);
}
Atom bitwise_and(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "and", x, y);
}
Atom bitwise_or(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "or", x, y);
}
Atom add_any(JaxprBuilder& b, const Atom& x, const Atom& y) {
  return binop(b, "add_any", x, y);
}

Atom select_n(JaxprBuilder& b, const Atom& which, const std::vector<Atom>& cases) {
  std::vector<Atom> in{which};
  in.insert(in.end(), cases.begin(), cases.end());
  return b.emit1("select_n", std::move(in));
}

Atom select(JaxprBuilder& b, const Atom& pred, const Atom& on_true, const Atom& on_false) {
  return select_n(b, pred, {on_false, on_true});
}

Atom convert_element_type(JaxprBuilder& b, const Atom& x, DType dtype, bool weak_type) {
  const ShapedArray& a = x.aval();
  if (a.dtype == dtype && a.weak_type == weak_type) return x;
  if (x.is_literal() && !x.literal().elided && a.shape.empty()) {
    const Literal& l = x.literal();
    if (is_floating(dtype)) return Literal::of(l.as_double(), dtype, weak_type);
    if (dtype == DType::bool_) return Literal::of(l.as_double() != 0.0 ? 1.0 : 0.0, dtype);
    if (!is_floating(a.dtype)) return Literal::of_int(l.as_int(), dtype, weak_type);
    // float -> integer: truncation toward zero, as numpy's astype.
    return Literal::of_int(static_cast<int64_t>(l.as_double()), dtype, weak_type);
  }
  return b.emit1("convert_element_type", {x}, lax_params::convert_element_type(dtype, weak_type));
}

// --- structural ---------------------------------------------------------------------------------

Atom broadcast_in_dim(JaxprBuilder& b, const Atom& x, const Shape& shape,
                      const std::vector<int64_t>& broadcast_dimensions) {
  if (x.aval().shape == shape && broadcast_dimensions.size() == shape.size()) return x;
  return b.emit1("broadcast_in_dim", {x},
                 lax_params::broadcast_in_dim(shape, broadcast_dimensions));
}

Atom broadcast(JaxprBuilder& b, const Atom& x, const Shape& sizes) {
  if (sizes.empty()) return x;
  std::vector<int64_t> dims(x.aval().shape.size());
  std::iota(dims.begin(), dims.end(), int64_t(sizes.size()));
  Shape shape = sizes;
  shape.insert(shape.end(), x.aval().shape.begin(), x.aval().shape.end());
  return broadcast_in_dim(b, x, shape, dims);
}

Atom reshape(JaxprBuilder& b, const Atom& x, const Shape& new_sizes,
             const std::optional<std::vector<int64_t>>& dimensions) {
  bool same_dims = true;
  if (dimensions)
    for (size_t i = 0; i < dimensions->size(); ++i) same_dims &= (*dimensions)[i] == int64_t(i);
  const Shape& shape = x.aval().shape;
  if (!shape.empty() && shape == new_sizes && same_dims) return x;
  Params p = lax_params::reshape(new_sizes);
  if (dimensions && !same_dims) p.set("dimensions", ParamValue::ints(*dimensions));
  return b.emit1("reshape", {x}, std::move(p));
}

Atom reduce_sum(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes) {
  return b.emit1("reduce_sum", {x}, lax_params::reduce(axes));
}

Atom transpose(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& permutation) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) identity &= permutation[i] == int64_t(i);
  if (identity) return x;
  return b.emit1("transpose", {x}, lax_params::transpose(permutation));
}

Atom squeeze(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty()) return x;
  std::vector<int64_t> sorted = dimensions;
  std::sort(sorted.begin(), sorted.end());
  return b.emit1("squeeze", {x}, lax_params::squeeze(sorted));
}

Atom expand_dims(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& dimensions) {
  std::vector<int64_t> dims = dimensions;
  std::sort(dims.begin(), dims.end());
  Shape shape = x.aval().shape;
  for (int64_t d : dims) shape.insert(shape.begin() + d, 1);
  std::vector<int64_t> bdims;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (!std::binary_search(dims.begin(), dims.end(), i)) bdims.push_back(i);
  return broadcast_in_dim(b, x, shape, bdims);
}

Atom concatenate(JaxprBuilder& b, const std::vector<Atom>& xs, int64_t dimension) {
  if (xs.size() == 1) return xs[0];
  return b.emit1("concatenate", xs, lax_params::concatenate(dimension));
}

Atom pad(JaxprBuilder& b, const Atom& x, const Atom& padding_value,
         const std::vector<PadDim>& config) {
  std::vector<std::vector<int64_t>> rows;
  for (const PadDim& d : config) rows.push_back({d.lo, d.hi, d.interior});
  return b.emit1("pad", {x, padding_value}, lax_params::pad(rows));
}

Atom slice(JaxprBuilder& b, const Atom& x, const Shape& start, const Shape& limit,
           const std::vector<int64_t>& strides) {
  return b.emit1("slice", {x}, lax_params::slice(start, limit, strides));
}

Atom slice_in_dim(JaxprBuilder& b, const Atom& x, int64_t start, std::optional<int64_t> limit,
                  int64_t stride, int64_t axis) {
  const Shape& shape = x.aval().shape;
  Shape starts(shape.size(), 0), limits = shape;
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t n = shape.at(size_t(axis));
  int64_t lim = limit.value_or(n);
  if (start < 0) start += n;
  if (lim < 0) lim += n;
  starts[size_t(axis)] = start;
  limits[size_t(axis)] = lim;
  strides[size_t(axis)] = stride;
  return slice(b, x, starts, limits, strides);
}

Atom dynamic_slice(JaxprBuilder& b, const Atom& x, const std::vector<Atom>& start,
                   const Shape& sizes) {
  std::vector<Atom> in{x};
  in.insert(in.end(), start.begin(), start.end());
  return b.emit1("dynamic_slice", std::move(in), lax_params::dynamic_slice(sizes));
}

Atom dynamic_update_slice(JaxprBuilder& b, const Atom& x, const Atom& update,
                          const std::vector<Atom>& start) {
  std::vector<Atom> in{x, update};
  in.insert(in.end(), start.begin(), start.end());
  return b.emit1("dynamic_update_slice", std::move(in));
}

Shape broadcast_shapes(const Shape& x, const Shape& y) {
  if (x.empty()) return y;
  if (y.empty()) return x;
  if (x.size() != y.size())
    throw TypeError(
        fmt::format("broadcast_shapes: ranks differ: {} and {}", shape_str(x), shape_str(y)));
  Shape out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] == 1 ? y[i] : x[i];
  return out;
}

}  // namespace cjax::ad
