// Shape-moving primitives. Those that read each output element from one input element at an
// affine position (broadcast_in_dim, transpose, rev, iota) are linalg.generic ops, so the
// elementwise-fusion pass folds them into their consumers instead of materialising them.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Dialect/Utils/ReshapeOpsUtils.h>

#include <algorithm>

#include "compiler/cpu/lowering.h"
#include "ir/params.h"
#include "ir/primitive.h"

namespace cjax::lower {
namespace {

using mlir::AffineExpr;
using mlir::AffineMap;
using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;

const ShapedArray& out_aval(const EqnLowering& el, size_t i = 0) {
  return el.eqn.outputs[i].aval();
}

// A generic that copies `in` read through `map` (one result per input dim over the output's
// loops).
Value gather_copy(EqnLowering& el, Value in, AffineMap map) {
  const ShapedArray& out = out_aval(el);
  auto id = el.b().getMultiDimIdentityMap(static_cast<unsigned>(out.shape.size()));
  return generic_op(el, {in}, {map}, id, static_cast<unsigned>(out.shape.size()), {},
                    empty_tensor(el, out), [](OpBuilder&, Location, ValueRange a) { return a[0]; });
}

std::vector<Value> broadcast_in_dim(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& x = el.eqn.inputs[0].aval();
  const ShapedArray& out = out_aval(el);
  const auto dims = el.eqn.params.get_ints("broadcast_dimensions");
  mlir::MLIRContext* ctx = el.b().getContext();
  std::vector<AffineExpr> exprs;
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<size_t>(dims[i]);
    // A size-1 dim stretched to a larger one always reads index 0.
    exprs.push_back(x.shape[i] == 1 && out.shape[d] != 1
                        ? mlir::getAffineConstantExpr(0, ctx)
                        : mlir::getAffineDimExpr(static_cast<unsigned>(d), ctx));
  }
  return {gather_copy(el, in[0],
                      AffineMap::get(static_cast<unsigned>(out.shape.size()), 0, exprs, ctx))};
}

std::vector<Value> transpose(EqnLowering& el, const std::vector<Value>& in) {
  const auto perm = el.eqn.params.get_ints("permutation");
  mlir::MLIRContext* ctx = el.b().getContext();
  // out[i0..] = x[...]: input dim perm[j] is read at output loop j.
  std::vector<AffineExpr> exprs(perm.size());
  for (size_t j = 0; j < perm.size(); ++j)
    exprs[static_cast<size_t>(perm[j])] = mlir::getAffineDimExpr(static_cast<unsigned>(j), ctx);
  return {
      gather_copy(el, in[0], AffineMap::get(static_cast<unsigned>(perm.size()), 0, exprs, ctx))};
}

std::vector<Value> rev(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& x = el.eqn.inputs[0].aval();
  const auto dims = el.eqn.params.get_ints("dimensions");
  mlir::MLIRContext* ctx = el.b().getContext();
  std::vector<AffineExpr> exprs;
  for (size_t i = 0; i < x.shape.size(); ++i) {
    AffineExpr d = mlir::getAffineDimExpr(static_cast<unsigned>(i), ctx);
    const bool reversed =
        std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) != dims.end();
    exprs.push_back(reversed ? mlir::getAffineConstantExpr(x.shape[i] - 1, ctx) - d : d);
  }
  return {
      gather_copy(el, in[0], AffineMap::get(static_cast<unsigned>(x.shape.size()), 0, exprs, ctx))};
}

std::vector<Value> iota(EqnLowering& el, const std::vector<Value>&) {
  const ShapedArray& out = out_aval(el);
  const int64_t dim = el.eqn.params.get_int("dimension");
  const auto rank = static_cast<unsigned>(out.shape.size());
  auto id = el.b().getMultiDimIdentityMap(rank);
  const DType t = out.dtype;
  return {generic_op(el, {}, {}, id, rank, {}, empty_tensor(el, out),
                     [&](OpBuilder& b, Location loc, ValueRange a) -> Value {
                       Value i = b.create<mlir::linalg::IndexOp>(loc, dim);
                       mlir::Type et = a[0].getType();
                       Value i64 = b.create<mlir::arith::IndexCastOp>(loc, b.getI64Type(), i);
                       if (is_floating(t)) return b.create<mlir::arith::SIToFPOp>(loc, et, i64);
                       if (et.getIntOrFloatBitWidth() == 64) return i64;
                       return b.create<mlir::arith::TruncIOp>(loc, et, i64);
                     })};
}

// reshape, squeeze and expand_dims: the same row-major elements under another shape, by
// collapsing to one dimension and expanding to the new shape.
std::vector<Value> reshape(EqnLowering& el, const std::vector<Value>& in) {
  // (squeeze's and expand_dims' `dimensions` name the unit dims, not a permutation.)
  if (const ParamValue* d = el.eqn.params.find("dimensions");
      el.eqn.prim->name == "reshape" && d && !d->is_none())
    not_native(el, "reshape with a dimensions permutation");
  const ShapedArray& x = el.eqn.inputs[0].aval();
  const ShapedArray& out = out_aval(el);
  OpBuilder& b = el.b();
  mlir::Type et = element_type(b, x.dtype, el.eqn.prim->name);
  if (x.shape == out.shape) return in;
  // One collapse or expansion when the new shape merges or splits runs of neighbouring dims (a
  // squeeze, an expand_dims, a merge of trailing dims): of a strided view (a slice, say) it stays
  // a view wherever the merged dims are contiguous, and unit dims always are, where going
  // through one dimension would copy the view first.
  if (x.shape.size() != out.shape.size() && !x.shape.empty() && !out.shape.empty()) {
    const bool collapse = out.shape.size() < x.shape.size();
    if (auto groups = mlir::getReassociationIndicesForCollapse(collapse ? x.shape : out.shape,
                                                               collapse ? out.shape : x.shape)) {
      auto out_type = tensor_type(b, out, el.eqn.prim->name);
      if (collapse)
        return {b.create<mlir::tensor::CollapseShapeOp>(el.loc, out_type, in[0], *groups)};
      return {b.create<mlir::tensor::ExpandShapeOp>(el.loc, out_type, in[0], *groups)};
    }
  }
  auto all_dims = [](size_t rank) {
    mlir::ReassociationIndices r;
    for (size_t i = 0; i < rank; ++i) r.push_back(static_cast<int64_t>(i));
    return std::vector<mlir::ReassociationIndices>{r};
  };
  const int64_t n = x.size();
  Value flat = in[0];
  if (x.shape.size() != 1) {
    auto flat_type = mlir::RankedTensorType::get({n}, et);
    flat = x.shape.empty()
               ? Value(b.create<mlir::tensor::ExpandShapeOp>(
                     el.loc, flat_type, in[0], std::vector<mlir::ReassociationIndices>{}))
               : Value(b.create<mlir::tensor::CollapseShapeOp>(el.loc, flat_type, in[0],
                                                               all_dims(x.shape.size())));
  }
  if (out.shape.size() == 1) return {flat};
  auto out_type = tensor_type(b, out, el.eqn.prim->name);
  if (out.shape.empty())
    return {b.create<mlir::tensor::CollapseShapeOp>(el.loc, out_type, flat,
                                                    std::vector<mlir::ReassociationIndices>{})};
  return {
      b.create<mlir::tensor::ExpandShapeOp>(el.loc, out_type, flat, all_dims(out.shape.size()))};
}

std::vector<Value> slice(EqnLowering& el, const std::vector<Value>& in) {
  const auto start = el.eqn.params.get_ints("start_indices");
  std::vector<int64_t> strides(start.size(), 1);
  if (const ParamValue* s = el.eqn.params.find("strides"); s && !s->is_none())
    strides = s->to_ints();
  const ShapedArray& out = out_aval(el);
  auto type = tensor_type(el.b(), out, "slice");
  return {el.b().create<mlir::tensor::ExtractSliceOp>(el.loc, type, in[0], mlir::ValueRange{},
                                                      mlir::ValueRange{}, mlir::ValueRange{}, start,
                                                      out.shape, strides)};
}

std::vector<Value> concatenate(EqnLowering& el, const std::vector<Value>& in) {
  const auto dim = static_cast<size_t>(el.eqn.params.get_int("dimension"));
  const ShapedArray& out = out_aval(el);
  Value acc = empty_tensor(el, out);
  int64_t offset = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = el.eqn.inputs[i].aval().shape;
    std::vector<int64_t> offsets(s.size(), 0), strides(s.size(), 1);
    offsets[dim] = offset;
    acc = el.b().create<mlir::tensor::InsertSliceOp>(el.loc, in[i], acc, mlir::ValueRange{},
                                                     mlir::ValueRange{}, mlir::ValueRange{},
                                                     offsets, s, strides);
    offset += s[dim];
  }
  return {acc};
}

// pad[padding_config](x, value): the output filled with `value`, then the operand's elements that
// survive negative (cropping) edges inserted at low + index * (interior + 1): one fill and one
// strided insert_slice, all offsets static.
std::vector<Value> pad(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& x = el.eqn.inputs[0].aval();
  const ShapedArray& out = out_aval(el);
  const ParamValue& cfg = el.eqn.params.at("padding_config");
  const std::vector<ParamValue>* dims = nullptr;
  if (cfg.is<ParamTuple>()) dims = &cfg.as<ParamTuple>().items;
  if (cfg.is<ParamList>()) dims = &cfg.as<ParamList>().items;
  if (!dims || dims->size() != x.shape.size()) not_native(el, "a malformed padding_config");
  OpBuilder& b = el.b();
  Value value = b.create<mlir::tensor::ExtractOp>(el.loc, in[1], ValueRange{});
  Value acc =
      b.create<mlir::linalg::FillOp>(el.loc, ValueRange{value}, ValueRange{empty_tensor(el, out)})
          .getResult(0);
  const size_t r = x.shape.size();
  if (r == 0) return {in[0]};
  std::vector<int64_t> first(r), count(r), offsets(r), strides(r), ones(r, 1);
  for (size_t d = 0; d < r; ++d) {
    const std::vector<int64_t> t = (*dims)[d].to_ints();
    if (t.size() != 3 || t[2] < 0) not_native(el, "a malformed padding_config");
    const int64_t lo = t[0], step = t[2] + 1, n = x.shape[d];
    // The operand indices i with 0 <= lo + i * step < out: [first, last].
    const int64_t first_i = lo >= 0 ? 0 : (-lo + step - 1) / step;
    const int64_t last_i =
        out.shape[d] - 1 - lo < 0 ? -1 : std::min(n - 1, (out.shape[d] - 1 - lo) / step);
    if (last_i < first_i) return {acc};  // every element cropped: only padding remains
    first[d] = first_i;
    count[d] = last_i - first_i + 1;
    offsets[d] = lo + first_i * step;
    strides[d] = step;
  }
  Value kept = in[0];
  if (count != x.shape) {
    mlir::Type et = element_type(b, x.dtype, "pad");
    kept = b.create<mlir::tensor::ExtractSliceOp>(el.loc, mlir::RankedTensorType::get(count, et),
                                                  in[0], ValueRange{}, ValueRange{}, ValueRange{},
                                                  first, count, ones);
  }
  return {b.create<mlir::tensor::InsertSliceOp>(el.loc, kept, acc, ValueRange{}, ValueRange{},
                                                ValueRange{}, offsets, count, strides)};
}

}  // namespace

void register_structural_rules(LowerRuleTable& t) {
  t.add("broadcast_in_dim", broadcast_in_dim);
  t.add("transpose", transpose);
  t.add("rev", rev);
  t.add("iota", iota);
  t.add("reshape", reshape);
  t.add("squeeze", reshape);
  t.add("expand_dims", reshape);
  t.add("slice", slice);
  t.add("concatenate", concatenate);
  t.add("pad", pad);
}

}  // namespace cjax::lower
