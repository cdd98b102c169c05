// dot_general, compiled two ways: small products as a native loop nest (in a program, that
// saves the runtime call and measured faster up to kNativeDotMaxMultiplyAdds), the rest through
// OpenBLAS (a runtime call, lower_runtime_calls.cc). The measurements: bench/step_bench.cc's
// BM_dot_native and BM_dot_blas, recorded in docs/backend.md ("Dots: loops or OpenBLAS").
#include <mlir/Dialect/Arith/IR/Arith.h>

#include <algorithm>

#include "compiler/cpu/lowering.h"
#include "ir/params.h"
#include "runtime/blas_dot.h"

namespace cjax::lower {
namespace {

using mlir::AffineExpr;
using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;

// Where dimension `d` is listed in `dims`, or dims.size() when it is not.
size_t position(const std::vector<int64_t>& dims, size_t d) {
  return static_cast<size_t>(std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) -
                             dims.begin());
}

bool contains(const std::vector<int64_t>& dims, size_t d) {
  return position(dims, d) < dims.size();
}

// The multiply-adds a product does: batch x lhs free x contracting x rhs free sizes.
int64_t multiply_adds(const ShapedArray& lhs, const ShapedArray& rhs,
                      const DotDimensionNumbers& dn) {
  int64_t n = 1;
  for (int64_t s : lhs.shape) n *= s;
  for (size_t d = 0; d < rhs.shape.size(); ++d)
    if (!contains(dn.rhs_batch, d) && !contains(dn.rhs_contract, d)) n *= rhs.shape[d];
  return n;
}

// The loop nest of a product: loops over the batch dims, the lhs's free dims, the contracting
// dims (reductions) and the rhs's free dims, in that order. The innermost loop runs along the
// output's last dimension and each output element accumulates in contracting order, so LLVM
// vectorizes that loop without reassociating any sum.
Value native_dot(EqnLowering& el, const std::vector<Value>& in, const DotDimensionNumbers& dn) {
  const ShapedArray& lhs = el.eqn.inputs[0].aval();
  const ShapedArray& rhs = el.eqn.inputs[1].aval();
  const ShapedArray& out = el.eqn.outputs[0].aval();
  mlir::MLIRContext* ctx = el.b().getContext();
  const size_t nb = dn.lhs_batch.size(), nc = dn.lhs_contract.size();
  const size_t lhs_free = lhs.shape.size() - nb - nc, rhs_free = rhs.shape.size() - nb - nc;
  const auto loops = static_cast<unsigned>(nb + lhs_free + nc + rhs_free);
  auto dim = [&](size_t i) { return mlir::getAffineDimExpr(static_cast<unsigned>(i), ctx); };
  // An operand's index expressions: its batch and contracting dims read those loops, and its
  // free dims, in order, the loops from `first_free` on.
  auto operand_exprs = [&](size_t rank, const std::vector<int64_t>& batch,
                           const std::vector<int64_t>& contract, size_t first_free) {
    std::vector<AffineExpr> exprs;
    for (size_t d = 0; d < rank; ++d) {
      if (contains(batch, d))
        exprs.push_back(dim(position(batch, d)));
      else if (contains(contract, d))
        exprs.push_back(dim(nb + lhs_free + position(contract, d)));
      else
        exprs.push_back(dim(first_free++));
    }
    return exprs;
  };
  const std::vector<AffineExpr> lhs_exprs =
      operand_exprs(lhs.shape.size(), dn.lhs_batch, dn.lhs_contract, nb);
  const std::vector<AffineExpr> rhs_exprs =
      operand_exprs(rhs.shape.size(), dn.rhs_batch, dn.rhs_contract, nb + lhs_free + nc);
  std::vector<AffineExpr> out_exprs;
  std::vector<bool> reduction(loops, false);
  for (size_t i = 0; i < loops; ++i) {
    if (i >= nb + lhs_free && i < nb + lhs_free + nc)
      reduction[i] = true;
    else
      out_exprs.push_back(dim(i));
  }
  auto map = [&](const std::vector<AffineExpr>& e) {
    return mlir::AffineMap::get(loops, 0, e, ctx);
  };
  const std::vector<mlir::AffineMap> maps = {map(lhs_exprs), map(rhs_exprs)};
  if (nc == 0)  // an outer product: elementwise, and fused like any elementwise op
    return generic_op(el, in, maps, map(out_exprs), loops, reduction, empty_tensor(el, out),
                      [](OpBuilder& b, Location loc, ValueRange a) {
                        return Value(b.create<mlir::arith::MulFOp>(loc, a[0], a[1]));
                      });
  if (out.dtype == DType::f32) {
    // f32 products accumulate in f64 (each product is exact there) and round once, as the
    // reductions do (lower_reductions.cc): the temporary is small, these products are.
    const ShapedArray wide{DType::f64, out.shape};
    Value sums = generic_op(el, in, maps, map(out_exprs), loops, reduction,
                            filled_tensor(el, wide, el.b().getF64FloatAttr(0.0)),
                            [](OpBuilder& b, Location loc, ValueRange a) {
                              Value x = b.create<mlir::arith::ExtFOp>(loc, b.getF64Type(), a[0]);
                              Value y = b.create<mlir::arith::ExtFOp>(loc, b.getF64Type(), a[1]);
                              Value product = b.create<mlir::arith::MulFOp>(loc, x, y);
                              return Value(b.create<mlir::arith::AddFOp>(loc, a[2], product));
                            });
    return elementwise(el, {sums}, out, [](OpBuilder& b, Location loc, ValueRange a) {
      return Value(b.create<mlir::arith::TruncFOp>(loc, b.getF32Type(), a[0]));
    });
  }
  const Value zero = filled_tensor(el, out, el.b().getF64FloatAttr(0.0));
  return generic_op(el, in, maps, map(out_exprs), loops, reduction, zero,
                    [](OpBuilder& b, Location loc, ValueRange a) {
                      Value product = b.create<mlir::arith::MulFOp>(loc, a[0], a[1]);
                      return Value(b.create<mlir::arith::AddFOp>(loc, a[2], product));
                    });
}

std::vector<Value> dot_general(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& lhs = el.eqn.inputs[0].aval();
  const ShapedArray& rhs = el.eqn.inputs[1].aval();
  const ShapedArray& out = el.eqn.outputs[0].aval();
  if (!runtime::blas_dot_supported(lhs, rhs, out))
    not_native(el, "dot_general compiles f32 and f64 operands of the output's dtype");
  const auto dn = DotDimensionNumbers::from_param(el.eqn.params.at("dimension_numbers"));
  runtime::DotPlan plan = runtime::plan_dot(lhs, rhs, dn, out);  // checks dn against the shapes
  const DotPath path = el.state.dot_path;
  if (path == DotPath::native ||
      (path == DotPath::by_size && multiply_adds(lhs, rhs, dn) <= kNativeDotMaxMultiplyAdds))
    return {native_dot(el, in, dn)};
  return blas_dot(el, in, std::move(plan));
}

}  // namespace

void register_dot_rules(LowerRuleTable& t) {
  t.add("dot_general", dot_general);
}

}  // namespace cjax::lower
