// Reductions over axes: a linalg.generic with reduction loops over the reduced dimensions,
// accumulating into an output filled with the monoid's identity.
#include <mlir/Dialect/Arith/IR/Arith.h>

#include <limits>

#include "compiler/cpu/lowering.h"
#include "ir/primitive.h"

namespace cjax::lower {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;
namespace arith = mlir::arith;

enum class Monoid { sum, prod, max, min, bit_and, bit_or, bit_xor };

// The monoid's identity as a constant of t's element type.
mlir::TypedAttr identity_of(OpBuilder& b, Monoid m, DType t) {
  mlir::Type et = element_type(b, t, "reduction");
  if (is_floating(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    const double v = m == Monoid::prod  ? 1.0
                     : m == Monoid::max ? -inf
                     : m == Monoid::min ? inf
                                        : 0.0;
    return b.getFloatAttr(et, v);
  }
  const unsigned bits = et.getIntOrFloatBitWidth();
  const bool is_signed = is_signed_integer(t);  // bools order as unsigned: False < True
  llvm::APInt v(bits, 0);
  switch (m) {
    case Monoid::sum:
    case Monoid::bit_or:
    case Monoid::bit_xor:
      break;
    case Monoid::prod:
      v = llvm::APInt(bits, 1);
      break;
    case Monoid::bit_and:
      v = llvm::APInt::getAllOnes(bits);
      break;
    case Monoid::max:
      v = is_signed ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getMinValue(bits);
      break;
    case Monoid::min:
      v = is_signed ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits);
      break;
  }
  return b.getIntegerAttr(et, v);
}

Value combine(OpBuilder& b, Location loc, Monoid m, DType t, Value acc, Value x) {
  const bool f = is_floating(t), u = is_unsigned_integer(t);
  switch (m) {
    case Monoid::sum:
      return f ? Value(b.create<arith::AddFOp>(loc, acc, x))
               : Value(b.create<arith::AddIOp>(loc, acc, x));
    case Monoid::prod:
      return f ? Value(b.create<arith::MulFOp>(loc, acc, x))
               : Value(b.create<arith::MulIOp>(loc, acc, x));
    case Monoid::max:
      if (f) return b.create<arith::MaximumFOp>(loc, acc, x);
      if (t == DType::bool_) return b.create<arith::OrIOp>(loc, acc, x);
      return u ? Value(b.create<arith::MaxUIOp>(loc, acc, x))
               : Value(b.create<arith::MaxSIOp>(loc, acc, x));
    case Monoid::min:
      if (f) return b.create<arith::MinimumFOp>(loc, acc, x);
      if (t == DType::bool_) return b.create<arith::AndIOp>(loc, acc, x);
      return u ? Value(b.create<arith::MinUIOp>(loc, acc, x))
               : Value(b.create<arith::MinSIOp>(loc, acc, x));
    case Monoid::bit_and:
      return b.create<arith::AndIOp>(loc, acc, x);
    case Monoid::bit_or:
      return b.create<arith::OrIOp>(loc, acc, x);
    case Monoid::bit_xor:
      return b.create<arith::XOrIOp>(loc, acc, x);
  }
  return acc;
}

// An f32 sum accumulated in f64 and rounded once, as the interpreter's (runtime/kernels/
// kernel_util.h, WideSum): an f32 accumulator stops growing at 2^24, and its error grows with
// the number of terms. The f64 partial sums cost an output-sized temporary.
Value wide_sum(EqnLowering& el, Value x, mlir::AffineMap in_map, mlir::AffineMap out_map,
               const std::vector<bool>& reduced) {
  const ShapedArray& out = el.eqn.outputs[0].aval();
  const ShapedArray wide{DType::f64, out.shape};
  Value sums = generic_op(el, {x}, {in_map}, out_map, static_cast<unsigned>(reduced.size()),
                          reduced, filled_tensor(el, wide, el.b().getF64FloatAttr(0.0)),
                          [](OpBuilder& b, Location loc, ValueRange a) {
                            Value term = b.create<arith::ExtFOp>(loc, b.getF64Type(), a[0]);
                            return Value(b.create<arith::AddFOp>(loc, a[1], term));
                          });
  return elementwise(el, {sums}, out, [](OpBuilder& b, Location loc, ValueRange a) {
    return Value(b.create<arith::TruncFOp>(loc, b.getF32Type(), a[0]));
  });
}

LowerRule reduction(Monoid m) {
  return [m](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    const ShapedArray& x = el.eqn.inputs[0].aval();
    const ShapedArray& out = el.eqn.outputs[0].aval();
    const DType t = x.dtype;
    if (is_floating(t) && (m == Monoid::bit_and || m == Monoid::bit_or || m == Monoid::bit_xor))
      not_native(el, "bitwise reduction of floats");
    const auto axes = el.eqn.params.get_ints("axes");
    const auto rank = static_cast<unsigned>(x.shape.size());
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
    mlir::MLIRContext* ctx = el.b().getContext();
    std::vector<mlir::AffineExpr> kept;
    for (unsigned d = 0; d < rank; ++d)
      if (!reduced[d]) kept.push_back(mlir::getAffineDimExpr(d, ctx));
    auto out_map = mlir::AffineMap::get(rank, 0, kept, ctx);
    const mlir::AffineMap in_map = el.b().getMultiDimIdentityMap(rank);
    if (m == Monoid::sum && t == DType::f32) return {wide_sum(el, in[0], in_map, out_map, reduced)};
    Value init = filled_tensor(el, out, identity_of(el.b(), m, t));
    return {generic_op(el, {in[0]}, {in_map}, out_map, rank, reduced, init,
                       [&](OpBuilder& b, Location loc, ValueRange a) {
                         return combine(b, loc, m, t, a[1], a[0]);
                       })};
  };
}

}  // namespace

void register_reduction_rules(LowerRuleTable& t) {
  t.add("reduce_sum", reduction(Monoid::sum));
  t.add("reduce_prod", reduction(Monoid::prod));
  t.add("reduce_max", reduction(Monoid::max));
  t.add("reduce_min", reduction(Monoid::min));
  t.add("reduce_and", reduction(Monoid::bit_and));
  t.add("reduce_or", reduction(Monoid::bit_or));
  t.add("reduce_xor", reduction(Monoid::bit_xor));
}

}  // namespace cjax::lower
