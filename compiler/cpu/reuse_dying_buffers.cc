#include "compiler/cpu/reuse_dying_buffers.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallVector.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>

#include <vector>

#include "compiler/cpu/free_after_last_use.h"

namespace cjax::lower {
namespace {

// The unconditional free of `buffer` in `block`, if there is one.
mlir::memref::DeallocOp free_in_block(mlir::Value buffer, mlir::Block* block) {
  for (mlir::Operation* user : buffer.getUsers())
    if (auto d = mlir::dyn_cast<mlir::memref::DeallocOp>(user); d && d->getBlock() == block)
      return d;
  return {};
}

// Whether every use of `alloc`'s buffer is in `op` or after it (the buffer can then be replaced
// by one that `op` is the first to write).
bool used_from(mlir::memref::AllocOp alloc, mlir::Operation* op) {
  for (mlir::Operation* user : alloc->getUsers()) {
    mlir::Operation* at = op->getBlock()->findAncestorOpInBlock(*user);
    if (!at || (at != op && at->isBeforeInBlock(op))) return false;
  }
  return true;
}

// An operand of `loop` it may write `out` over, with its free: a buffer of the same static type
// that the block allocates and frees, that `loop` reads at the index it writes and reads last, and
// that none of `loop`'s other operands reaches (a view of it read at another index would see the
// writes).
struct Dying {
  mlir::Value buffer;
  mlir::memref::DeallocOp free;
};
Dying dying_operand(mlir::linalg::GenericOp loop, mlir::MemRefType out,
                    const llvm::DenseSet<mlir::Value>& taken) {
  mlir::Block* block = loop->getBlock();
  for (mlir::OpOperand* in : loop.getDpsInputOperands()) {
    mlir::Value x = in->get();
    if (x.getType() != out || taken.contains(x) || !loop.getMatchingIndexingMap(in).isIdentity())
      continue;
    auto alloc = x.getDefiningOp<mlir::memref::AllocOp>();
    if (!alloc || alloc->getBlock() != block) continue;
    mlir::memref::DeallocOp free = free_in_block(x, block);
    if (!free) continue;
    llvm::DenseSet<mlir::Value> derived;
    if (last_reader_in_block(x, block, free, &derived) != loop.getOperation()) continue;
    bool alone = true;
    for (mlir::OpOperand& other : loop->getOpOperands())
      if (derived.contains(other.get()) && (other.get() != x || !loop.isDpsInput(&other) ||
                                            !loop.getMatchingIndexingMap(&other).isIdentity()))
        alone = false;
    if (alone) return {x, free};
  }
  return {};
}

void reuse_in(mlir::linalg::GenericOp loop) {
  if (loop.getNumLoops() != loop.getNumParallelLoops()) return;
  llvm::DenseSet<mlir::Value> taken;
  for (mlir::OpOperand& init : loop.getDpsInitsMutable()) {
    auto alloc = init.get().getDefiningOp<mlir::memref::AllocOp>();
    if (!alloc || alloc->getBlock() != loop->getBlock() || !alloc.getType().hasStaticShape() ||
        !alloc.getType().getLayout().isIdentity() || loop.payloadUsesValueFromOperand(&init) ||
        !loop.getMatchingIndexingMap(&init).isIdentity() || !used_from(alloc, loop))
      continue;
    const Dying x = dying_operand(loop, alloc.getType(), taken);
    if (!x.buffer) continue;
    taken.insert(x.buffer);
    x.free->erase();  // the result's buffer, x now, is freed where the result's was
    alloc.getResult().replaceAllUsesWith(x.buffer);
    alloc.erase();
  }
}

}  // namespace

void reuse_dying_buffers(mlir::ModuleOp module) {
  std::vector<mlir::linalg::GenericOp> loops;
  module.walk([&](mlir::linalg::GenericOp g) {
    if (g.hasPureBufferSemantics()) loops.push_back(g);
  });
  for (mlir::linalg::GenericOp g : loops) reuse_in(g);
}

}  // namespace cjax::lower
