// Control flow compiled natively, as scf loops and branches on tensors whose regions hold the
// lowered jaxprs (lower_jaxpr_body, so dots in a body are BLAS calls and nested control flow
// nests):
//   scan  -> scf.for over [0, length): the carries and the stacked ys are iter_args; xs[t] is a
//            tensor.extract_slice, ys[t] a tensor.insert_slice (t = length-1-i when reversed);
//   cond  -> scf.if on index > 0 for two branches, else scf.index_switch on the index clamped
//            into range (as the interpreter and JAX clamp it); one branch is inlined;
//   while -> scf.while: cond_jaxpr in the before region, body_jaxpr in the after region.
// `unroll`, `linear` and `_split_transpose` are hints or transformation facts: they change no
// value. An eqn whose body cannot be compiled (a dtype the back end has no type for, a primitive
// with neither rule nor kernel) is left whole to the interpreter's kernel, and so is a loop whose
// nest of loops is deeper than kMaxNativeLoopDepth: MLIR's empty-tensor elimination and one-shot
// bufferization take time exponential in the depth of nested scf loops with iter_args (about 2x
// per level: 1.4 s at 20 levels, 78 s at 26).
#include <fmt/format.h>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <algorithm>

#include "compiler/cpu/lowering.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "ir/sub_jaxprs.h"

namespace cjax::lower {
namespace {

using mlir::Block;
using mlir::OpBuilder;
using mlir::OpFoldResult;
using mlir::Value;

constexpr size_t kMaxNativeLoopDepth = 12;

// How deeply scan and while loops nest in `jaxpr`, through calls, branches and loop bodies.
size_t loop_depth(const Jaxpr& jaxpr) {
  size_t depth = 0;
  for (const Eqn& e : jaxpr.eqns) {
    const size_t here = e.prim->name == "scan" || e.prim->name == "while" ? 1 : 0;
    depth = std::max(depth, here);
    for (const Jaxpr* body : sub_jaxprs(e)) depth = std::max(depth, here + loop_depth(*body));
  }
  return depth;
}

// A loop nest too deep for MLIR's bufferization (see the top of the file) runs on the kernel.
void check_loop_depth(const EqnLowering& el, const Jaxpr& jaxpr) {
  const size_t depth = 1 + loop_depth(jaxpr);
  if (depth > kMaxNativeLoopDepth)
    not_native(el, fmt::format("its loops nest {} deep, more than the {} compiled natively", depth,
                               kMaxNativeLoopDepth));
}

const Jaxpr& jaxpr_param(const EqnLowering& el, std::string_view key) {
  const JaxprRef& j = el.eqn.params.get_jaxpr(key);
  if (!j) throw TypeError(unsupported_message(el, fmt::format("param '{}' holds no jaxpr", key)));
  return *j;
}

std::vector<mlir::Type> types_of(const std::vector<Value>& values) {
  std::vector<mlir::Type> out;
  for (Value v : values) out.push_back(v.getType());
  return out;
}

mlir::Value index_constant(OpBuilder& b, mlir::Location loc, int64_t v) {
  return b.create<mlir::arith::ConstantIndexOp>(loc, v);
}

// Lowers `jaxpr` on `args` at the end of `block` (before its terminator when it has one) and
// returns its results; the caller terminates the block.
std::vector<Value> lower_in_block(EqnLowering& el, Block* block, const Jaxpr& jaxpr,
                                  const std::vector<Value>& args) {
  OpBuilder::InsertionGuard guard(el.b());
  if (!block->empty() && block->back().hasTrait<mlir::OpTrait::IsTerminator>())
    el.b().setInsertionPoint(&block->back());
  else
    el.b().setInsertionPointToEnd(block);
  return lower_jaxpr_body(el.state, jaxpr, args);
}

// Ends `block` with scf.yield of `values` (replacing the empty yield a region without results
// was built with).
void yield_in(EqnLowering& el, Block* block, const std::vector<Value>& values) {
  OpBuilder::InsertionGuard guard(el.b());
  if (!block->empty() && block->back().hasTrait<mlir::OpTrait::IsTerminator>())
    block->back().erase();
  el.b().setInsertionPointToEnd(block);
  el.b().create<mlir::scf::YieldOp>(el.loc, values);
}

// A runtime call keeps its pointer list in a memref.alloca; inside a loop that would grow the
// stack on every iteration. The lists have static sizes and are rewritten before each call, so
// one slot per call at the function's entry serves every iteration.
void hoist_allocas(mlir::Operation* op) {
  auto func = op->getParentOfType<mlir::func::FuncOp>();
  if (!func) return;
  Block& entry = func.getBody().front();
  std::vector<mlir::memref::AllocaOp> allocas;
  op->walk([&](mlir::memref::AllocaOp a) {
    if (a->getNumOperands() == 0) allocas.push_back(a);
  });
  for (mlir::memref::AllocaOp a : allocas) a->moveBefore(&entry.front());
}

// Builds a control-flow op with `build` (which sets `op` as soon as it exists); if its body cannot
// be compiled, the op is erased and the eqn goes to the interpreter's kernel instead.
std::vector<Value> build_or_fall_back(EqnLowering& el,
                                      const std::function<void(mlir::Operation*&)>& build) {
  mlir::Operation* op = nullptr;
  const size_t calls_before = el.state.calls.size();
  try {
    build(op);
  } catch (const UnsupportedError& e) {
    if (op) op->erase();
    // The erased body's runtime calls, last in the table, are called by nothing now.
    el.state.calls.resize(calls_before);
    not_native(el, fmt::format("its body cannot be compiled ({})", e.what()));
  }
  hoist_allocas(op);
  return std::vector<Value>(op->getResults().begin(), op->getResults().end());
}

// scan[jaxpr num_consts num_carry length reverse](*consts, *init, *xs).
std::vector<Value> scan(EqnLowering& el, const std::vector<Value>& in) {
  const Jaxpr& body = jaxpr_param(el, "jaxpr");
  check_loop_depth(el, body);
  const int64_t num_consts = el.eqn.params.get_int("num_consts");
  const int64_t num_carry = el.eqn.params.get_int("num_carry");
  const int64_t length = el.eqn.params.get_int("length");
  const bool reverse = el.eqn.params.has("reverse") && el.eqn.params.get_bool("reverse");
  if (num_consts < 0 || num_carry < 0 || length < 0 ||
      static_cast<size_t>(num_consts + num_carry) > in.size())
    throw TypeError(
        unsupported_message(el, fmt::format("{} operands cannot hold {} consts and {} carries",
                                            in.size(), num_consts, num_carry)));
  const auto nconst = static_cast<size_t>(num_consts), ncarry = static_cast<size_t>(num_carry);
  if (el.eqn.outputs.size() < ncarry)
    throw TypeError(unsupported_message(
        el, fmt::format("{} outputs cannot hold {} carries", el.eqn.outputs.size(), ncarry)));
  const size_t nys = el.eqn.outputs.size() - ncarry;
  OpBuilder& b = el.b();
  const mlir::Location loc = el.loc;

  return build_or_fall_back(el, [&](mlir::Operation*& op) {
    // iter_args: the carries, then one [length, ...] accumulator per y.
    std::vector<Value> inits(in.begin() + static_cast<ptrdiff_t>(nconst),
                             in.begin() + static_cast<ptrdiff_t>(nconst + ncarry));
    for (size_t k = 0; k < nys; ++k)
      inits.push_back(empty_tensor(el, el.eqn.outputs[ncarry + k].aval()));
    auto loop =
        b.create<mlir::scf::ForOp>(loc, index_constant(b, loc, 0), index_constant(b, loc, length),
                                   index_constant(b, loc, 1), inits);
    op = loop;
    Block* block = loop.getBody();
    OpBuilder::InsertionGuard guard(b);
    if (!block->empty() && block->back().hasTrait<mlir::OpTrait::IsTerminator>())
      b.setInsertionPoint(&block->back());
    else
      b.setInsertionPointToEnd(block);
    Value t = loop.getInductionVar();
    if (reverse) t = b.create<mlir::arith::SubIOp>(loc, index_constant(b, loc, length - 1), t);
    // offsets [t, 0, ...], sizes [1, d...], unit strides: one slice along the leading axis.
    auto slice_of = [&](llvm::ArrayRef<int64_t> stacked) {
      std::vector<OpFoldResult> offsets{t}, sizes{b.getIndexAttr(1)}, strides;
      for (size_t d = 1; d < stacked.size(); ++d) {
        offsets.push_back(b.getIndexAttr(0));
        sizes.push_back(b.getIndexAttr(stacked[d]));
      }
      for (size_t d = 0; d < stacked.size(); ++d) strides.push_back(b.getIndexAttr(1));
      return std::tuple{offsets, sizes, strides};
    };

    std::vector<Value> args(in.begin(), in.begin() + static_cast<ptrdiff_t>(nconst));
    for (size_t k = 0; k < ncarry; ++k) args.push_back(loop.getRegionIterArgs()[k]);
    for (size_t k = nconst + ncarry; k < in.size(); ++k) {
      auto stacked = mlir::cast<mlir::RankedTensorType>(in[k].getType());
      if (stacked.getRank() == 0 || stacked.getShape()[0] != length)
        throw TypeError(
            unsupported_message(el, fmt::format("scanned operand {} has no leading dimension {}",
                                                el.eqn.inputs[k].aval().str_short(), length)));
      auto slice =
          mlir::RankedTensorType::get(stacked.getShape().drop_front(), stacked.getElementType());
      auto [offsets, sizes, strides] = slice_of(stacked.getShape());
      args.push_back(
          b.create<mlir::tensor::ExtractSliceOp>(loc, slice, in[k], offsets, sizes, strides));
    }
    std::vector<Value> results = lower_jaxpr_body(el.state, body, args);
    if (results.size() != ncarry + nys)
      throw TypeError(unsupported_message(
          el, fmt::format("the body returns {} values for {} carries and {} outputs",
                          results.size(), ncarry, nys)));
    std::vector<Value> next(results.begin(), results.begin() + static_cast<ptrdiff_t>(ncarry));
    for (size_t k = 0; k < nys; ++k) {
      Value acc = loop.getRegionIterArgs()[ncarry + k];
      auto [offsets, sizes, strides] =
          slice_of(mlir::cast<mlir::RankedTensorType>(acc.getType()).getShape());
      next.push_back(b.create<mlir::tensor::InsertSliceOp>(loc, results[ncarry + k], acc, offsets,
                                                           sizes, strides));
    }
    yield_in(el, block, next);
  });
}

// The branch index as an i64 scalar: an integer of any width (unsigned ones zero-extended) or a
// bool as 0/1.
Value index_scalar(EqnLowering& el, Value index_tensor) {
  OpBuilder& b = el.b();
  const DType t = el.eqn.inputs[0].aval().dtype;
  if (is_floating(t) || el.eqn.inputs[0].aval().rank() != 0)
    throw TypeError(
        unsupported_message(el, fmt::format("the index must be an integer or bool scalar, got {}",
                                            el.eqn.inputs[0].aval().str_short())));
  Value x = b.create<mlir::tensor::ExtractOp>(el.loc, index_tensor, mlir::ValueRange{});
  const unsigned width = x.getType().getIntOrFloatBitWidth();
  if (width < 64) {
    if (t == DType::bool_ || is_unsigned_integer(t))
      x = b.create<mlir::arith::ExtUIOp>(el.loc, b.getI64Type(), x);
    else
      x = b.create<mlir::arith::ExtSIOp>(el.loc, b.getI64Type(), x);
  }
  return x;
}

const std::vector<ParamValue>& branch_params(const EqnLowering& el) {
  const ParamValue& bv = el.eqn.params.at("branches");
  if (bv.is<ParamTuple>()) return bv.as<ParamTuple>().items;
  if (bv.is<ParamList>()) return bv.as<ParamList>().items;
  throw TypeError(unsupported_message(el, "'branches' is not a tuple of jaxprs"));
}

// cond[branches](index, *operands).
std::vector<Value> cond(EqnLowering& el, const std::vector<Value>& in) {
  std::vector<const Jaxpr*> branches;
  for (const ParamValue& p : branch_params(el)) {
    if (!p.is<JaxprRef>() || !p.as<JaxprRef>())
      throw TypeError(unsupported_message(el, "a branch is not a jaxpr"));
    branches.push_back(p.as<JaxprRef>().get());
  }
  if (branches.empty() || in.empty())
    throw TypeError(unsupported_message(el, "no branches, or no index"));
  const std::vector<Value> operands(in.begin() + 1, in.end());
  std::vector<mlir::Type> result_types;
  for (const Var& v : el.eqn.outputs)
    result_types.push_back(tensor_type(el.b(), v.aval(), el.eqn.prim->name));
  if (branches.size() == 1) return lower_jaxpr_body(el.state, *branches[0], operands);

  OpBuilder& b = el.b();
  const mlir::Location loc = el.loc;
  auto lower_branch = [&](Block* block, const Jaxpr& j) {
    yield_in(el, block, lower_in_block(el, block, j, operands));
  };
  return build_or_fall_back(el, [&](mlir::Operation*& op) {
    const auto last = static_cast<int64_t>(branches.size()) - 1;
    Value x = index_scalar(el, in[0]);
    if (branches.size() == 2) {
      // Clamped into [0, 1], the index picks branch 1 exactly when it is positive.
      Value zero = b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
      const bool is_unsigned = el.eqn.inputs[0].aval().dtype == DType::bool_ ||
                               is_unsigned_integer(el.eqn.inputs[0].aval().dtype);
      Value pred = b.create<mlir::arith::CmpIOp>(
          loc, is_unsigned ? mlir::arith::CmpIPredicate::ne : mlir::arith::CmpIPredicate::sgt, x,
          zero);
      auto branch = b.create<mlir::scf::IfOp>(loc, result_types, pred, /*addThenBlock=*/true,
                                              /*addElseBlock=*/true);
      op = branch;
      lower_branch(branch.thenBlock(), *branches[1]);
      lower_branch(branch.elseBlock(), *branches[0]);
      return;
    }
    if (el.eqn.inputs[0].aval().dtype != DType::bool_ &&
        !is_unsigned_integer(el.eqn.inputs[0].aval().dtype))
      x = b.create<mlir::arith::MaxSIOp>(
          loc, x, b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(0)));
    x = b.create<mlir::arith::MinUIOp>(
        loc, x, b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(last)));
    Value index = b.create<mlir::arith::IndexCastOp>(loc, b.getIndexType(), x);
    // Cases 0 .. n-2; the last branch is the default region.
    std::vector<int64_t> cases;
    for (int64_t k = 0; k < last; ++k) cases.push_back(k);
    auto sw = b.create<mlir::scf::IndexSwitchOp>(loc, result_types, index, cases,
                                                 static_cast<unsigned>(cases.size()));
    op = sw;
    for (int64_t k = 0; k < last; ++k)
      lower_branch(&sw.getCaseRegions()[static_cast<size_t>(k)].emplaceBlock(),
                   *branches[static_cast<size_t>(k)]);
    lower_branch(&sw.getDefaultRegion().emplaceBlock(), *branches.back());
  });
}

// while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts](*cond_consts, *body_consts, *carry).
std::vector<Value> while_loop(EqnLowering& el, const std::vector<Value>& in) {
  const Jaxpr& cond_j = jaxpr_param(el, "cond_jaxpr");
  const Jaxpr& body_j = jaxpr_param(el, "body_jaxpr");
  check_loop_depth(el, body_j);
  check_loop_depth(el, cond_j);
  const int64_t cn = el.eqn.params.get_int("cond_nconsts");
  const int64_t bn = el.eqn.params.get_int("body_nconsts");
  if (cn < 0 || bn < 0 || static_cast<size_t>(cn + bn) > in.size())
    throw TypeError(unsupported_message(
        el, fmt::format("{} operands cannot hold {} + {} consts", in.size(), cn, bn)));
  const auto nc = static_cast<size_t>(cn), nb = static_cast<size_t>(bn);
  const std::vector<Value> cond_consts(in.begin(), in.begin() + static_cast<ptrdiff_t>(nc));
  const std::vector<Value> body_consts(in.begin() + static_cast<ptrdiff_t>(nc),
                                       in.begin() + static_cast<ptrdiff_t>(nc + nb));
  const std::vector<Value> inits(in.begin() + static_cast<ptrdiff_t>(nc + nb), in.end());
  const std::vector<mlir::Type> carry_types = types_of(inits);
  OpBuilder& b = el.b();
  const mlir::Location loc = el.loc;
  return build_or_fall_back(el, [&](mlir::Operation*& op) {
    auto loop = b.create<mlir::scf::WhileOp>(loc, carry_types, inits);
    op = loop;
    OpBuilder::InsertionGuard guard(b);
    const std::vector<mlir::Location> locs(carry_types.size(), loc);
    Block* before = b.createBlock(&loop.getBefore(), {}, carry_types, locs);
    std::vector<Value> args = cond_consts;
    args.insert(args.end(), before->getArguments().begin(), before->getArguments().end());
    std::vector<Value> pred = lower_jaxpr_body(el.state, cond_j, args);
    if (pred.size() != 1 || mlir::cast<mlir::RankedTensorType>(pred[0].getType()).getRank() != 0 ||
        !mlir::cast<mlir::RankedTensorType>(pred[0].getType()).getElementType().isInteger(1))
      throw TypeError(unsupported_message(el, "cond_jaxpr must return one bool[]"));
    Value p = b.create<mlir::tensor::ExtractOp>(loc, pred[0], mlir::ValueRange{});
    b.create<mlir::scf::ConditionOp>(loc, p, before->getArguments());

    Block* after = b.createBlock(&loop.getAfter(), {}, carry_types, locs);
    args = body_consts;
    args.insert(args.end(), after->getArguments().begin(), after->getArguments().end());
    std::vector<Value> next = lower_jaxpr_body(el.state, body_j, args);
    if (types_of(next) != carry_types)
      throw TypeError(unsupported_message(el, "body_jaxpr returns other types than its carry"));
    b.create<mlir::scf::YieldOp>(loc, next);
  });
}

}  // namespace

void register_control_flow_rules(LowerRuleTable& t) {
  t.add("scan", scan);
  t.add("cond", cond);
  t.add("while", while_loop);
}

}  // namespace cjax::lower
