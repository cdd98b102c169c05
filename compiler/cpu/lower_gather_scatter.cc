// gather and the scatters as native code, with XLA's semantics as runtime/kernels/gather_scatter.cc
// implements them (the index vector is the indices' last dim):
// - gather: one linalg.generic over the output whose body reads the start indices and then the
//   operand element (tensor.extract at computed positions); starts are clamped into the operand
//   (CLIP, PROMISE_IN_BOUNDS) or, under FILL_OR_DROP, a window that does not fit reads the fill
//   value.
// - scatter, scatter-add/-mul/-min/-max: one scf.for over the update elements, in the kernel's
//   order (batch positions row-major, then each window row-major), reading, combining and writing
//   one element of the result carried as the loop's tensor; a window that does not fit (anything
//   but CLIP, which clamps) writes back what it read. The order makes repeated indices give the
//   interpreter's result, bit for bit.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/cpu/lowering.h"
#include "ir/gather_params.h"
#include "ir/primitive.h"

namespace cjax::lower {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;

// Where one window starts in the operand, for the batch position `position` (the index values
// of the indices' batch dims): each start clamped so that the window fits (what is read and
// written), and, unless `clamp`, whether the unclamped start already fitted (null when clamping).
struct WindowStart {
  std::vector<Value> at;
  Value inside;
};

WindowStart window_start(OpBuilder& b, Location loc, Value indices, bool unsigned_indices,
                         const std::vector<Value>& position, const std::vector<int64_t>& index_map,
                         const std::vector<int64_t>& operand_batching_dims,
                         const std::vector<int64_t>& indices_batching_dims,
                         const Shape& operand_shape, const Shape& window, bool clamp) {
  auto index_const = [&](int64_t v) -> Value {
    return b.create<mlir::arith::ConstantIndexOp>(loc, v);
  };
  std::vector<Value> start(operand_shape.size(), index_const(0));
  for (size_t k = 0; k < index_map.size(); ++k) {
    std::vector<Value> at = position;
    at.push_back(index_const(static_cast<int64_t>(k)));
    Value raw = b.create<mlir::tensor::ExtractOp>(loc, indices, at);
    start[static_cast<size_t>(index_map[k])] =
        unsigned_indices ? Value(b.create<mlir::arith::IndexCastUIOp>(loc, b.getIndexType(), raw))
                         : Value(b.create<mlir::arith::IndexCastOp>(loc, b.getIndexType(), raw));
  }
  for (size_t i = 0; i < operand_batching_dims.size(); ++i)
    start[static_cast<size_t>(operand_batching_dims[i])] =
        position[static_cast<size_t>(indices_batching_dims[i])];
  WindowStart w;
  for (size_t d = 0; d < start.size(); ++d) {
    const int64_t hi = operand_shape[d] - window[d];
    w.at.push_back(b.create<mlir::arith::MaxSIOp>(
        loc, b.create<mlir::arith::MinSIOp>(loc, start[d], index_const(std::max<int64_t>(hi, 0))),
        index_const(0)));
    if (clamp) continue;
    Value ok = b.create<mlir::arith::AndIOp>(
        loc,
        b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::sge, start[d],
                                      index_const(0)),
        b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::sle, start[d],
                                      index_const(hi)));
    w.inside = w.inside ? Value(b.create<mlir::arith::AndIOp>(loc, w.inside, ok)) : ok;
  }
  return w;
}

// Indices the native rules read: integers with an index-vector dim, not u64 (whose values past
// int64's range the kernels treat as out of bounds).
void check_indices(EqnLowering& el, const ShapedArray& ia) {
  if (ia.rank() < 1 || ia.dtype == DType::u64 || !is_integer(ia.dtype))
    not_native(el, "indices that are not of a signed or 32-bit integer dtype with an index dim");
}

// The fill value of a FILL_OR_DROP gather: the param when given, else NaN for floats, true for
// bools and the largest value of an integer dtype (JAX's default).
mlir::TypedAttr fill_attr(OpBuilder& b, const Params& params, DType t, mlir::Type et) {
  const ParamValue* v = params.find("fill_value");
  const bool given = v && (v->is<double>() || v->is<int64_t>() || v->is<bool>());
  const double d = !given             ? 0.0
                   : v->is<double>()  ? v->as<double>()
                   : v->is<int64_t>() ? static_cast<double>(v->as<int64_t>())
                                      : static_cast<double>(v->as<bool>());
  if (is_floating(t))
    return b.getFloatAttr(et, given ? d : std::numeric_limits<double>::quiet_NaN());
  const unsigned bits = et.getIntOrFloatBitWidth();
  if (t == DType::bool_) return b.getIntegerAttr(et, given ? (d != 0.0) : 1);
  if (given)
    return b.getIntegerAttr(
        et, llvm::APInt(bits, static_cast<uint64_t>(static_cast<int64_t>(d)), true));
  return b.getIntegerAttr(et, is_unsigned_integer(t) ? llvm::APInt::getMaxValue(bits)
                                                     : llvm::APInt::getSignedMaxValue(bits));
}

std::vector<Value> gather(EqnLowering& el, const std::vector<Value>& in) {
  const Params& params = el.eqn.params;
  const auto dn = GatherDimensionNumbers::from_param(params.at("dimension_numbers"));
  const GatherScatterMode mode = gather_scatter_mode(params.at("mode"));
  const Shape sizes = params.get_ints("slice_sizes");
  const ShapedArray& oa = el.eqn.inputs[0].aval();
  const ShapedArray& ia = el.eqn.inputs[1].aval();
  const ShapedArray& ra = el.eqn.outputs[0].aval();
  check_indices(el, ia);
  const WindowDims dims = window_dims(dn, oa.rank(), ra.rank());
  if (!dims.fit(ia.rank(), dn.offset_dims.size()))
    not_native(el, "dimension numbers that do not fit the operand and indices");
  const bool clamp = mode != GatherScatterMode::fill_or_drop;
  OpBuilder& b = el.b();
  mlir::Type et = element_type(b, oa.dtype, "gather");
  const mlir::TypedAttr fill = clamp ? mlir::TypedAttr() : fill_attr(b, params, oa.dtype, et);
  const auto rank = static_cast<unsigned>(ra.rank());
  Value out = generic_op(
      el, {}, {}, b.getMultiDimIdentityMap(rank), rank, {}, empty_tensor(el, ra),
      [&](OpBuilder& bb, Location loc, ValueRange) -> Value {
        auto loop = [&](int64_t d) -> Value {
          return bb.create<mlir::linalg::IndexOp>(loc, static_cast<uint64_t>(d));
        };
        std::vector<Value> position;  // the output's batch dims, in order
        for (int64_t d : dims.batch_dims) position.push_back(loop(d));
        // Clamped starts address the read; under FILL_OR_DROP `inside` chooses the result.
        WindowStart w = window_start(bb, loc, in[1], is_unsigned_integer(ia.dtype), position,
                                     dn.start_index_map, dn.operand_batching_dims,
                                     dn.start_indices_batching_dims, oa.shape, sizes, clamp);
        for (size_t k = 0; k < dims.operand_window_dims.size(); ++k) {
          const auto d = static_cast<size_t>(dims.operand_window_dims[k]);
          w.at[d] = bb.create<mlir::arith::AddIOp>(loc, w.at[d], loop(dn.offset_dims[k]));
        }
        Value value = bb.create<mlir::tensor::ExtractOp>(loc, in[0], w.at);
        if (!w.inside) return value;
        Value filler = bb.create<mlir::arith::ConstantOp>(loc, fill);
        return bb.create<mlir::arith::SelectOp>(loc, w.inside, value, filler);
      });
  return {out};
}

enum class Combine { set, add, mul, min, max };

Value combine(OpBuilder& b, Location loc, Combine c, DType t, Value x, Value y) {
  using namespace mlir::arith;
  const bool f = is_floating(t), u = is_unsigned_integer(t) || t == DType::bool_;
  switch (c) {
    case Combine::set:
      return y;
    case Combine::add:  // bool: or, as XLA's
      if (t == DType::bool_) return b.create<OrIOp>(loc, x, y);
      return f ? Value(b.create<AddFOp>(loc, x, y)) : Value(b.create<AddIOp>(loc, x, y));
    case Combine::mul:  // bool: and
      if (t == DType::bool_) return b.create<AndIOp>(loc, x, y);
      return f ? Value(b.create<MulFOp>(loc, x, y)) : Value(b.create<MulIOp>(loc, x, y));
    case Combine::min:  // floats propagate NaN, as lax.min
      if (f) return b.create<MinimumFOp>(loc, x, y);
      return u ? Value(b.create<MinUIOp>(loc, x, y)) : Value(b.create<MinSIOp>(loc, x, y));
    case Combine::max:
      if (f) return b.create<MaximumFOp>(loc, x, y);
      return u ? Value(b.create<MaxUIOp>(loc, x, y)) : Value(b.create<MaxSIOp>(loc, x, y));
  }
  return y;
}

LowerRule scatter_rule(Combine how) {
  return [how](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    const auto dn = ScatterDimensionNumbers::from_param(el.eqn.params.at("dimension_numbers"));
    const GatherScatterMode mode = gather_scatter_mode(el.eqn.params.at("mode"));
    const ShapedArray& oa = el.eqn.inputs[0].aval();
    const ShapedArray& ia = el.eqn.inputs[1].aval();
    const ShapedArray& ua = el.eqn.inputs[2].aval();
    check_indices(el, ia);
    const WindowDims dims = window_dims(dn, oa.rank(), ua.rank());
    if (!dims.fit(ia.rank(), dn.update_window_dims.size()))
      not_native(el, "dimension numbers that do not fit the operand, indices and updates");
    const std::vector<int64_t>& update_batch_dims = dims.batch_dims;
    const std::vector<int64_t>& operand_window_dims = dims.operand_window_dims;
    (void)element_type(el.b(), oa.dtype, el.eqn.prim->name);  // a dtype the back end compiles
    if (ua.size() == 0 || oa.size() == 0) return {in[0]};     // nothing to write, or nowhere
    Shape window(static_cast<size_t>(oa.rank()), 1);
    for (size_t k = 0; k < dn.update_window_dims.size(); ++k)
      window[static_cast<size_t>(operand_window_dims[k])] = ua.shape[dn.update_window_dims[k]];
    // The loop's order: the update dims batch first, then window, each row-major.
    std::vector<int64_t> order = update_batch_dims;
    order.insert(order.end(), dn.update_window_dims.begin(), dn.update_window_dims.end());
    const bool clamp = mode == GatherScatterMode::clip;
    OpBuilder& b = el.b();
    const Location loc = el.loc;
    auto index_const = [&](int64_t v) -> Value {
      return b.create<mlir::arith::ConstantIndexOp>(loc, v);
    };
    auto loop = b.create<mlir::scf::ForOp>(loc, index_const(0), index_const(ua.size()),
                                           index_const(1), ValueRange{in[0]});
    OpBuilder::InsertionGuard guard(b);
    mlir::Block* body = loop.getBody();
    if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
      b.setInsertionPoint(&body->back());
    else
      b.setInsertionPointToEnd(body);
    Value acc = loop.getRegionIterArgs()[0];
    // The update element's position, dim by dim in `order`, from the induction variable.
    std::vector<Value> u(static_cast<size_t>(ua.rank()));
    Value rest = loop.getInductionVar();
    for (size_t j = order.size(); j-- > 0;) {
      const int64_t size = ua.shape[order[j]];
      u[static_cast<size_t>(order[j])] =
          b.create<mlir::arith::RemUIOp>(loc, rest, index_const(size));
      rest = b.create<mlir::arith::DivUIOp>(loc, rest, index_const(size));
    }
    std::vector<Value> position;  // the batch position: the update's batch dims
    for (int64_t d : update_batch_dims) position.push_back(u[static_cast<size_t>(d)]);
    WindowStart w = window_start(b, loc, in[1], is_unsigned_integer(ia.dtype), position,
                                 dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                                 dn.scatter_indices_batching_dims, oa.shape, window, clamp);
    std::vector<Value>& at = w.at;
    for (size_t k = 0; k < operand_window_dims.size(); ++k) {
      const auto d = static_cast<size_t>(operand_window_dims[k]);
      at[d] = b.create<mlir::arith::AddIOp>(loc, at[d],
                                            u[static_cast<size_t>(dn.update_window_dims[k])]);
    }
    // A window that does not fit may still address the operand past its end once clamped along
    // the window: the clamped start keeps every position of it inside.
    Value x = b.create<mlir::tensor::ExtractOp>(loc, acc, at);
    Value y = b.create<mlir::tensor::ExtractOp>(loc, in[2], u);
    Value next = combine(b, loc, how, oa.dtype, x, y);
    if (w.inside) next = b.create<mlir::arith::SelectOp>(loc, w.inside, next, x);
    Value written = b.create<mlir::tensor::InsertOp>(loc, next, acc, at);
    if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
      body->back().erase();
    b.setInsertionPointToEnd(body);
    b.create<mlir::scf::YieldOp>(loc, ValueRange{written});
    return {loop.getResult(0)};
  };
}

}  // namespace

void register_gather_scatter_rules(LowerRuleTable& t) {
  t.add("gather", gather);
  t.add("scatter", scatter_rule(Combine::set));
  t.add("scatter-add", scatter_rule(Combine::add));
  t.add("scatter-mul", scatter_rule(Combine::mul));
  t.add("scatter-min", scatter_rule(Combine::min));
  t.add("scatter-max", scatter_rule(Combine::max));
}

}  // namespace cjax::lower
