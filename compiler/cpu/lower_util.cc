// Helpers every lowering rule file uses: types, constants, linalg.generic, runtime calls.
#include <fmt/format.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Arith/Utils/Utils.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Dialect/Utils/StaticValueUtils.h>

#include <optional>

#include "compiler/cpu/lowering.h"
#include "ir/errors.h"
#include "ir/primitive.h"

namespace cjax::lower {

mlir::Type element_type(mlir::OpBuilder& b, DType t, std::string_view prim) {
  switch (t) {
    case DType::f32:
      return b.getF32Type();
    case DType::f64:
      return b.getF64Type();
    case DType::bool_:
      return b.getI1Type();
    case DType::i8:
    case DType::u8:
      return b.getI8Type();
    case DType::i16:
    case DType::u16:
      return b.getI16Type();
    case DType::i32:
    case DType::u32:
      return b.getI32Type();
    case DType::i64:
    case DType::u64:
    case DType::key_fry:  // a threefry key's two u32 words, as one i64 (lower_random.cc)
      return b.getI64Type();
    default:
      throw UnsupportedError(fmt::format("lower: {}: the CPU back end does not compile {} arrays",
                                         prim, short_name(t)));
  }
}

mlir::RankedTensorType tensor_type(mlir::OpBuilder& b, const ShapedArray& aval,
                                   std::string_view prim) {
  return mlir::RankedTensorType::get(aval.shape, element_type(b, aval.dtype, prim));
}

mlir::MemRefType memref_type(mlir::OpBuilder& b, const ShapedArray& aval, std::string_view prim) {
  return mlir::MemRefType::get(aval.shape, element_type(b, aval.dtype, prim));
}

mlir::Value literal_tensor(mlir::OpBuilder& b, mlir::Location loc, const Literal& l) {
  if (l.elided)
    throw UnsupportedError("lower: an elided array literal ([...]) has no value to compile");
  auto type = tensor_type(b, l.aval, "literal");
  mlir::Type et = type.getElementType();
  mlir::Attribute value;
  if (is_floating(l.aval.dtype))
    value = b.getFloatAttr(et, l.as_double());
  else if (l.aval.dtype == DType::bool_)
    value = b.getBoolAttr(l.as_int() != 0);
  else if (const auto* u = std::get_if<uint64_t>(&l.value))
    value = b.getIntegerAttr(et, llvm::APInt(et.getIntOrFloatBitWidth(), *u));
  else
    value = b.getIntegerAttr(et, l.as_int());
  return b.create<mlir::arith::ConstantOp>(
      loc, type, mlir::DenseElementsAttr::get(type, llvm::ArrayRef<mlir::Attribute>{value}));
}

mlir::Value empty_tensor(EqnLowering& el, const ShapedArray& aval) {
  return el.b().create<mlir::tensor::EmptyOp>(el.loc, aval.shape,
                                              element_type(el.b(), aval.dtype, el.eqn.prim->name));
}

mlir::Value filled_tensor(EqnLowering& el, const ShapedArray& aval, mlir::TypedAttr fill) {
  mlir::Value v = el.b().create<mlir::arith::ConstantOp>(el.loc, fill);
  return el.b()
      .create<mlir::linalg::FillOp>(el.loc, mlir::ValueRange{v},
                                    mlir::ValueRange{empty_tensor(el, aval)})
      .getResult(0);
}

mlir::Value generic_op(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                       const std::vector<mlir::AffineMap>& input_maps, mlir::AffineMap out_map,
                       unsigned num_loops, const std::vector<bool>& is_reduction, mlir::Value init,
                       const ScalarBody& body) {
  mlir::OpBuilder& b = el.b();
  std::vector<mlir::AffineMap> maps = input_maps;
  maps.push_back(out_map);
  std::vector<mlir::utils::IteratorType> iters(num_loops, mlir::utils::IteratorType::parallel);
  for (unsigned i = 0; i < num_loops && i < is_reduction.size(); ++i)
    if (is_reduction[i]) iters[i] = mlir::utils::IteratorType::reduction;
  auto op = b.create<mlir::linalg::GenericOp>(
      el.loc, mlir::TypeRange{init.getType()}, inputs, mlir::ValueRange{init}, maps, iters,
      [&](mlir::OpBuilder& nb, mlir::Location nl, mlir::ValueRange args) {
        nb.create<mlir::linalg::YieldOp>(nl, body(nb, nl, args));
      });
  return op.getResult(0);
}

mlir::Value elementwise(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                        const ShapedArray& out, const ScalarBody& body) {
  mlir::OpBuilder& b = el.b();
  mlir::MLIRContext* ctx = b.getContext();
  const auto rank = static_cast<unsigned>(out.shape.size());
  // Operands broadcast as jaxprs allow: a rank-0 operand, and size-1 dimensions (aligned from
  // the right) stretched to the output's size, which read index 0.
  std::vector<mlir::AffineMap> maps;
  for (mlir::Value v : inputs) {
    auto shape = mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
    const size_t offset = rank - shape.size();
    std::vector<mlir::AffineExpr> exprs;
    for (size_t i = 0; i < shape.size(); ++i) {
      const size_t d = offset + i;
      exprs.push_back(shape[i] == 1 && out.shape[d] != 1
                          ? mlir::getAffineConstantExpr(0, ctx)
                          : mlir::getAffineDimExpr(static_cast<unsigned>(d), ctx));
    }
    maps.push_back(mlir::AffineMap::get(rank, 0, exprs, ctx));
  }
  return generic_op(el, inputs, maps, b.getMultiDimIdentityMap(rank), rank, {},
                    empty_tensor(el, out), body);
}

namespace {

// When `t` is a slice of one of the function's input buffers that is one contiguous block of it
// (leading dims of size 1 at any offset, then one dim at any offset, then whole dims), the
// address of its first element; a runtime call reads it in place instead of a copy of the slice
// (a scan body's dot reads its layer's weights from the stacked argument this way). Inputs are
// never written, so the address taken once stays valid; slices of other tensors, which
// bufferization may update in place, keep their copy.
std::optional<mlir::Value> slice_address(mlir::OpBuilder& b, mlir::Location loc, mlir::Value t) {
  auto slice = t.getDefiningOp<mlir::tensor::ExtractSliceOp>();
  if (!slice) return std::nullopt;
  auto input = slice.getSource().getDefiningOp<mlir::bufferization::ToTensorOp>();
  if (!input || input.getWritable() || !mlir::isa<mlir::BlockArgument>(input.getMemref()))
    return std::nullopt;
  auto source = mlir::cast<mlir::RankedTensorType>(slice.getSource().getType());
  if (!source.hasStaticShape()) return std::nullopt;
  const auto sizes = slice.getStaticSizes();
  const auto offsets = slice.getMixedOffsets();
  for (int64_t st : slice.getStaticStrides())
    if (st != 1) return std::nullopt;
  const auto shape = source.getShape();
  const size_t rank = shape.size();
  size_t k = 0;  // the first dim not of size 1
  while (k < rank && sizes[k] == 1) ++k;
  for (size_t i = k + 1; i < rank; ++i) {
    auto off = mlir::getConstantIntValue(offsets[i]);
    if (sizes[i] != shape[i] || !off || *off != 0) return std::nullopt;
  }
  // Byte offset: the sum over the dims of offset * row-major stride * element size; constant
  // terms folded, one multiply per dynamic offset (a loop's index).
  const int64_t bytes = (source.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  int64_t constant = 0, stride = bytes;
  std::vector<std::pair<mlir::Value, int64_t>> dynamic;
  for (size_t i = rank; i-- > 0;) {
    if (auto off = mlir::getConstantIntValue(offsets[i]))
      constant += *off * stride;
    else
      dynamic.emplace_back(mlir::cast<mlir::Value>(offsets[i]), stride);
    stride *= shape[i];
  }
  // The address of the input's own buffer (the function's argument), not of a to_memref of the
  // tensor: inside a loop, that would be a copy of the whole input on every iteration.
  mlir::Value address =
      b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, input.getMemref());
  if (constant != 0)
    address = b.create<mlir::arith::AddIOp>(loc, address,
                                            b.create<mlir::arith::ConstantIndexOp>(loc, constant));
  for (auto [off, scale] : dynamic)
    address = b.create<mlir::arith::AddIOp>(
        loc, address,
        b.create<mlir::arith::MulIOp>(loc, off,
                                      b.create<mlir::arith::ConstantIndexOp>(loc, scale)));
  return address;
}

}  // namespace

std::vector<mlir::Value> emit_runtime_call(EqnLowering& el, std::unique_ptr<RuntimeCall> call,
                                           const std::vector<mlir::Value>& inputs,
                                           const std::vector<ShapedArray>& out_avals) {
  mlir::OpBuilder& b = el.b();
  const mlir::Location loc = el.loc;
  std::vector<mlir::Value> pointers, buffers;
  auto pointer_of = [&](mlir::Value memref) {
    return b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, memref).getResult();
  };
  // Each input: its address, then (for the CPU's RuntimeCall::invoke) its strides. The GPU back
  // end (state.memory_transfers) plans its host code's calls from these tables itself and passes
  // row-major buffers: its inputs are taken in that layout, copied by bufferization if need be.
  const bool strided = !el.state.memory_transfers;
  for (mlir::Value t : inputs) {
    auto tt = mlir::cast<mlir::RankedTensorType>(t.getType());
    if (!strided) {
      auto mt = mlir::MemRefType::get(tt.getShape(), tt.getElementType());
      if (std::optional<mlir::Value> address = slice_address(b, loc, t))
        pointers.push_back(*address);
      else
        pointers.push_back(
            pointer_of(b.create<mlir::bufferization::ToMemrefOp>(loc, mt, t, /*read_only=*/true)));
      continue;
    }
    if (std::optional<mlir::Value> address = slice_address(b, loc, t)) {
      pointers.push_back(*address);
      int64_t stride = 1;
      std::vector<mlir::Value> strides(static_cast<size_t>(tt.getRank()));
      for (int64_t d = tt.getRank(); d-- > 0;) {
        strides[static_cast<size_t>(d)] = b.create<mlir::arith::ConstantIndexOp>(loc, stride);
        stride *= tt.getDimSize(d);
      }
      pointers.insert(pointers.end(), strides.begin(), strides.end());
      continue;
    }
    // The tensor's buffer in whatever layout it has (a view is not copied here: the call copies
    // one that is not row-major), read at its offset.
    std::vector<int64_t> dynamic(static_cast<size_t>(tt.getRank()), mlir::ShapedType::kDynamic);
    auto layout = mlir::StridedLayoutAttr::get(b.getContext(), mlir::ShapedType::kDynamic, dynamic);
    auto mt = mlir::MemRefType::get(tt.getShape(), tt.getElementType(), layout);
    mlir::Value view = b.create<mlir::bufferization::ToMemrefOp>(loc, mt, t, /*read_only=*/true);
    auto metadata = b.create<mlir::memref::ExtractStridedMetadataOp>(loc, view);
    const int64_t bytes = (tt.getElementType().getIntOrFloatBitWidth() + 7) / 8;
    mlir::Value offset_bytes = b.create<mlir::arith::MulIOp>(
        loc, metadata.getOffset(), b.create<mlir::arith::ConstantIndexOp>(loc, bytes));
    pointers.push_back(b.create<mlir::arith::AddIOp>(loc, pointer_of(view), offset_bytes));
    for (mlir::Value stride : metadata.getStrides()) pointers.push_back(stride);
  }
  for (size_t i = 0; i < out_avals.size(); ++i) {
    mlir::Value buf;
    if (i < el.eqn.outputs.size())
      if (auto it = el.state.output_buffers.find(el.eqn.outputs[i].id());
          it != el.state.output_buffers.end())
        buf = it->second;
    if (!buf)
      buf = b.create<mlir::memref::AllocOp>(loc, memref_type(b, out_avals[i], el.eqn.prim->name),
                                            b.getI64IntegerAttr(64));
    buffers.push_back(buf);
    pointers.push_back(pointer_of(buf));
  }
  auto list_type = mlir::MemRefType::get({static_cast<int64_t>(pointers.size())}, b.getIndexType());
  mlir::Value list = b.create<mlir::memref::AllocaOp>(loc, list_type);
  for (size_t i = 0; i < pointers.size(); ++i) {
    mlir::Value idx = b.create<mlir::arith::ConstantIndexOp>(loc, static_cast<int64_t>(i));
    b.create<mlir::memref::StoreOp>(loc, pointers[i], list, mlir::ValueRange{idx});
  }
  auto dyn_type = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getIndexType());
  mlir::Value dyn_list = b.create<mlir::memref::CastOp>(loc, dyn_type, list);
  // The call's index in the table every function receives (see lower_function).
  const auto index = static_cast<int64_t>(el.state.calls.size());
  mlir::Value h = b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(index));
  b.create<mlir::func::CallOp>(loc, kRuntimeCallSymbol, mlir::TypeRange{},
                               mlir::ValueRange{el.state.call_table, h, dyn_list});
  el.state.calls.push_back(std::move(call));
  std::vector<mlir::Value> results;
  for (mlir::Value buf : buffers)
    results.push_back(b.create<mlir::bufferization::ToTensorOp>(loc, buf, /*restrict=*/true,
                                                                /*writable=*/true));
  return results;
}

}  // namespace cjax::lower
