#include "compiler/cpu/fusion.h"

#include <mlir/Dialect/Affine/IR/AffineOps.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Linalg/Transforms/Transforms.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <algorithm>
#include <vector>

namespace cjax::lower {
namespace {

// At most this many arithmetic ops make an op cheap enough to compute once per reader.
constexpr int kCheapBodyOps = 6;

bool all_parallel(mlir::linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

// Whether fusing `operand`'s producer into its reader keeps the work and the values the same:
// MLIR's test; a producer that does not read its own output buffers (a loop-nest product
// accumulates into zeros; fused into a reader, it read another product's values as its zeros,
// found by the random programs); and, when the reader has reduction loops, that it reads each
// element once (a product reads each operand element once per output column: a producer fused
// there would be recomputed as often).
bool fusable(mlir::OpOperand& operand) {
  if (!mlir::linalg::areElementwiseOpsFusable(&operand)) return false;
  auto producer = mlir::cast<mlir::linalg::GenericOp>(operand.get().getDefiningOp());
  for (mlir::OpOperand& init : producer.getDpsInitsMutable())
    if (producer.payloadUsesValueFromOperand(&init)) return false;
  auto consumer = mlir::cast<mlir::linalg::GenericOp>(operand.getOwner());
  return all_parallel(consumer) || consumer.getMatchingIndexingMap(&operand).isPermutation();
}

// A single-result elementwise op whose recomputation costs less than a round trip through
// memory: a few arithmetic ops (no division, nothing from the math dialect) on at most one
// array; its other operands are scalars.
bool is_cheap(mlir::linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || !all_parallel(op) || op.getNumResults() != 1) return false;
  if (op.payloadUsesValueFromOperand(op.getDpsInitOperand(0))) return false;
  int arrays = 0;
  for (mlir::OpOperand* in : op.getDpsInputOperands()) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(in->get().getType());
    if (!type) return false;
    if (type.getRank() > 0) ++arrays;
  }
  if (arrays > 1) return false;
  int ops = 0;
  for (mlir::Operation& inner : op.getBody()->without_terminator()) {
    if (!mlir::isa<mlir::arith::ArithDialect>(inner.getDialect())) return false;
    if (mlir::isa<mlir::arith::DivFOp, mlir::arith::DivSIOp, mlir::arith::DivUIOp,
                  mlir::arith::RemFOp, mlir::arith::RemSIOp, mlir::arith::RemUIOp>(inner))
      return false;
    if (++ops > kCheapBodyOps) return false;
  }
  return true;
}

// Gives every reader of a cheap op that could fuse it a copy of its own, placed just before
// the reader, so the value is recomputed there rather than materialized (a single reader gets
// the op moved next to it, so it is not fused early into some other loop and stored). Readers
// that cannot fuse it (a runtime call, a return, a transposing loop) keep the original, and so
// do readers inside a loop's body (a copy there would run once per iteration). Visiting the ops
// last to first copies a chain of cheap ops whole: a copy's own operand is visited later.
void duplicate_cheap_producers(mlir::ModuleOp module) {
  std::vector<mlir::linalg::GenericOp> generics;
  module.walk([&](mlir::linalg::GenericOp op) { generics.push_back(op); });
  for (auto it = generics.rbegin(); it != generics.rend(); ++it) {
    mlir::linalg::GenericOp op = *it;
    if (!is_cheap(op)) continue;
    std::vector<mlir::OpOperand*> readers;
    for (mlir::OpOperand& use : op->getResult(0).getUses())
      if (use.getOwner()->getBlock() == op->getBlock() && fusable(use)) readers.push_back(&use);
    for (mlir::OpOperand* use : readers) {
      mlir::OpBuilder b(use->getOwner());
      use->set(b.clone(*op)->getResult(0));
    }
    if (op->use_empty()) op->erase();
  }
}

// True when `consumer` comes before every other reader of `producer`'s results, so the fused
// op, which takes the consumer's place, can hand the producer's values to those readers too.
bool precedes_other_readers(mlir::Operation* producer, mlir::Operation* consumer) {
  mlir::Block* block = consumer->getBlock();
  for (mlir::Operation* user : producer->getUsers()) {
    if (user == consumer) continue;
    mlir::Operation* ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor || ancestor == consumer || !consumer->isBeforeInBlock(ancestor)) return false;
  }
  return true;
}

// A function argument, as a tensor or as the tensor view of a buffer argument: alive throughout.
bool is_argument(mlir::Value v) {
  if (auto view = v.getDefiningOp<mlir::bufferization::ToTensorOp>()) v = view.getMemref();
  return mlir::isa<mlir::BlockArgument>(v);
}

// True when fusing `producer` into `consumer` keeps none of the producer's array inputs alive
// longer: each is an argument, or is read at or after the consumer anyway. (The fused op reads
// them where the consumer is; otherwise, moving a producer with several readers down past other
// ops could raise the peak.)
bool extends_no_lifetime(mlir::linalg::GenericOp producer, mlir::Operation* consumer) {
  mlir::Block* block = consumer->getBlock();
  for (mlir::OpOperand* in : producer.getDpsInputOperands()) {
    mlir::Value v = in->get();
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
    if (!type || type.getRank() == 0 || is_argument(v) || !producer.payloadUsesValueFromOperand(in))
      continue;
    bool read_later = false;
    for (mlir::Operation* user : v.getUsers()) {
      mlir::Operation* ancestor = block->findAncestorOpInBlock(*user);
      if (ancestor && !ancestor->isBeforeInBlock(consumer)) read_later = true;
    }
    if (!read_later) return false;
  }
  return true;
}

// True when every other operand of `consumer` that reads a result of `operand`'s producer is an
// input with `operand`'s indexing map, and the producer writes those results with one map: then
// at each point of the fused loop, those operands read exactly the values the fused body
// computes there, so it can use them instead of reading them back (see `read_own_values`).
bool reads_alike(mlir::OpOperand& operand) {
  auto producer = mlir::cast<mlir::linalg::GenericOp>(operand.get().getDefiningOp());
  auto consumer = mlir::cast<mlir::linalg::GenericOp>(operand.getOwner());
  auto result_map = [&](mlir::Value v) {
    return producer.getIndexingMapMatchingResult(mlir::cast<mlir::OpResult>(v));
  };
  const mlir::AffineMap map = consumer.getMatchingIndexingMap(&operand);
  for (mlir::OpOperand& other : consumer->getOpOperands()) {
    if (&other == &operand || other.get().getDefiningOp() != producer) continue;
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(other.get().getType());
    if (!consumer.isDpsInput(&other) || !type || !type.hasStaticShape() ||
        consumer.getMatchingIndexingMap(&other) != map ||
        result_map(other.get()) != result_map(operand.get()))
      return false;
  }
  return true;
}

// Whether the loop nest fusing `producer` into `consumer` has at most 40 operands (inputs and
// outputs). Every operand of a loop nest is a kernel parameter on the GPU, where they must fit in
// 4 KiB (a rank-2 buffer's descriptor takes 56 bytes); a long chain of elementwise ops with inputs
// of their own (a gradient's steps written out inline) would grow past that.
bool fits(mlir::Operation* producer, mlir::Operation* consumer) {
  constexpr unsigned kMaxFusedOperands = 40;
  return consumer->getNumOperands() + producer->getNumOperands() + producer->getNumResults() <=
         kMaxFusedOperands;
}

// Whether `operand`'s producer may be fused into its reader (which may read other results of
// it too, see `reads_alike`). A producer with readers besides this one is fused only into an
// all-parallel reader in its own block (a reduction's loop cannot also write the producer's
// array) that precedes them all, and only where that keeps no array alive longer.
bool may_fuse(mlir::OpOperand& operand) {
  if (!fusable(operand) || !reads_alike(operand)) return false;
  mlir::Operation* producer = operand.get().getDefiningOp();
  auto consumer = mlir::cast<mlir::linalg::GenericOp>(operand.getOwner());
  if (!fits(producer, consumer)) return false;
  const auto users = producer->getUsers();
  if (std::all_of(users.begin(), users.end(), [&](mlir::Operation* u) { return u == consumer; }))
    return true;
  return producer->getBlock() == consumer->getBlock() && all_parallel(consumer) &&
         precedes_other_readers(producer, consumer) &&
         extends_no_lifetime(mlir::cast<mlir::linalg::GenericOp>(producer), consumer);
}

// The results of `producer` that `consumer` reads through operands other than `fused`.
std::vector<mlir::Value> read_elsewhere(mlir::Operation* producer, mlir::Operation* consumer,
                                        mlir::OpOperand& fused) {
  std::vector<mlir::Value> values;
  for (mlir::OpOperand& other : consumer->getOpOperands())
    if (&other != &fused && other.get().getDefiningOp() == producer) values.push_back(other.get());
  return values;
}

// After `producer` was fused into `fused` through one operand, the fused op's other operands
// still read results of the producer that its own body now computes (`reads_alike` made sure
// it computes them at the same points). The body takes those values directly, and each such
// operand reads an empty tensor instead, which nothing uses and canonicalization drops.
void read_own_values(mlir::RewriterBase& rewriter, mlir::linalg::GenericOp fused,
                     mlir::Operation* producer,
                     const llvm::DenseMap<mlir::Value, mlir::Value>& replacements) {
  mlir::Operation* yield = fused.getBody()->getTerminator();
  for (mlir::OpOperand* in : fused.getDpsInputOperands()) {
    auto yielded = replacements.find(in->get());  // the keep in absorb_one_producer made sure
    if (in->get().getDefiningOp() != producer || yielded == replacements.end()) continue;
    auto result = mlir::cast<mlir::OpResult>(yielded->second);
    rewriter.replaceAllUsesWith(fused.getMatchingBlockArgument(in),
                                yield->getOperand(result.getResultNumber()));
    auto type = mlir::cast<mlir::RankedTensorType>(in->get().getType());
    rewriter.setInsertionPoint(fused);
    mlir::Value empty = rewriter.create<mlir::tensor::EmptyOp>(fused.getLoc(), type.getShape(),
                                                               type.getElementType());
    rewriter.modifyOpInPlace(fused, [&] { in->set(empty); });
  }
}

// Fuses into `consumer` the first producer it may absorb; returns the fused op, or null when
// there is none. The fused op yields the producer's values its other readers need and replaces
// both ops; nothing is computed twice.
mlir::linalg::GenericOp absorb_one_producer(mlir::RewriterBase& rewriter,
                                            mlir::linalg::GenericOp consumer) {
  for (mlir::OpOperand& operand : consumer->getOpOperands()) {
    if (!may_fuse(operand)) continue;
    mlir::Operation* producer = operand.get().getDefiningOp();
    rewriter.setInsertionPoint(consumer);
    // MLIR's fusion yields the producer results that have readers other than the consumer; a
    // temporary reader makes it yield those the consumer reads through its other operands.
    const std::vector<mlir::Value> elsewhere = read_elsewhere(producer, consumer, operand);
    mlir::Operation* keep = nullptr;
    if (!elsewhere.empty())
      keep = rewriter.create<mlir::UnrealizedConversionCastOp>(
          consumer.getLoc(), mlir::TypeRange{elsewhere[0].getType()}, mlir::ValueRange(elsewhere));
    mlir::FailureOr<mlir::linalg::ElementwiseOpFusionResult> fused =
        mlir::linalg::fuseElementwiseOps(rewriter, &operand);
    if (keep) rewriter.eraseOp(keep);
    if (mlir::failed(fused)) continue;
    auto fused_op = mlir::cast<mlir::linalg::GenericOp>(fused->fusedOp);
    read_own_values(rewriter, fused_op, producer, fused->replacements);
    for (auto [original, replacement] : fused->replacements)
      rewriter.replaceAllUsesWith(original, replacement);
    rewriter.eraseOp(consumer);
    if (producer->use_empty()) rewriter.eraseOp(producer);
    return fused_op;
  }
  return nullptr;
}

// In program order, each op absorbs its producers (which have absorbed theirs already). Only
// ops already visited are erased: a producer comes before its readers.
void fuse_producers_into_readers(mlir::ModuleOp module) {
  std::vector<mlir::linalg::GenericOp> generics;
  module.walk([&](mlir::linalg::GenericOp op) { generics.push_back(op); });
  mlir::IRRewriter rewriter(module.getContext());
  for (mlir::linalg::GenericOp op : generics) {
    while (mlir::linalg::GenericOp fused = absorb_one_producer(rewriter, op)) op = fused;
  }
}

}  // namespace

void fuse_elementwise(mlir::ModuleOp module) {
  duplicate_cheap_producers(module);
  fuse_producers_into_readers(module);
  mlir::MLIRContext* ctx = module.getContext();
  const mlir::linalg::ControlFusionFn single_use = [](mlir::OpOperand* operand) {
    mlir::Operation* producer = operand->get().getDefiningOp();
    return producer && producer->hasOneUse();
  };
  const mlir::linalg::ControlFusionFn single_use_same_work = [&](mlir::OpOperand* operand) {
    return single_use(operand) && mlir::isa<mlir::linalg::GenericOp>(operand->getOwner()) &&
           fusable(*operand) && fits(operand->get().getDefiningOp(), operand->getOwner());
  };
  // Then what MLIR's linalg-fuse-elementwise-ops applies: folding reshapes into loops,
  // canonicalizations, constant folding (and single-use fusion, for what they expose).
  mlir::RewritePatternSet patterns(ctx);
  mlir::linalg::populateElementwiseOpsFusionPatterns(patterns, single_use_same_work);
  mlir::linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, single_use);
  mlir::affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
  mlir::linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
  mlir::tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
  mlir::tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
  ctx->getLoadedDialect<mlir::linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
  mlir::linalg::populateConstantFoldLinalgOperations(patterns, single_use);
  mlir::GreedyRewriteConfig config;
  config.useTopDownTraversal = true;
  const mlir::FrozenRewritePatternSet frozen(std::move(patterns));
  module.walk(
      [&](mlir::func::FuncOp f) { (void)mlir::applyPatternsAndFoldGreedily(f, frozen, config); });
}

}  // namespace cjax::lower
