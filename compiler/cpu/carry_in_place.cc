#include "compiler/cpu/carry_in_place.h"

#include <llvm/ADT/DenseSet.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>

#include <vector>

namespace cjax::lower {
namespace {

bool all_parallel(mlir::linalg::GenericOp op) {
  for (mlir::utils::IteratorType t : op.getIteratorTypesArray())
    if (t != mlir::utils::IteratorType::parallel) return false;
  return true;
}

// Whether `op` reads `value` after every other reader of it in `op`'s block.
bool last_reader(mlir::Value value, mlir::Operation* op) {
  mlir::Block* block = op->getBlock();
  for (mlir::OpOperand& use : value.getUses()) {
    mlir::Operation* at = block->findAncestorOpInBlock(*use.getOwner());
    if (!at) return false;  // read outside the block
    if (at != op && !at->isBeforeInBlock(op)) return false;
  }
  return true;
}

}  // namespace

void carry_in_place(mlir::ModuleOp module) {
  // The carries: the iteration arguments of every scf.for, and what is written over them.
  llvm::DenseSet<mlir::Value> carries;
  module.walk([&](mlir::scf::ForOp loop) {
    for (mlir::Value arg : loop.getRegionIterArgs()) carries.insert(arg);
  });
  std::vector<mlir::linalg::GenericOp> generics;
  module.walk([&](mlir::linalg::GenericOp op) { generics.push_back(op); });  // in program order
  for (mlir::linalg::GenericOp op : generics) {
    if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 || !all_parallel(op)) continue;
    mlir::OpOperand* init = op.getDpsInitOperand(0);
    if (!init->get().getDefiningOp<mlir::tensor::EmptyOp>()) continue;
    if (!op.getMatchingBlockArgument(init).use_empty()) continue;  // the body reads its output
    const mlir::Type type = op->getResult(0).getType();
    const mlir::AffineMap out_map = op.getMatchingIndexingMap(init);
    for (mlir::OpOperand* in : op.getDpsInputOperands()) {
      mlir::Value v = in->get();
      if (!carries.contains(v) || v.getType() != type) continue;
      if (op.getMatchingIndexingMap(in) != out_map || !last_reader(v, op)) continue;
      init->set(v);
      carries.insert(op->getResult(0));
      break;
    }
  }
}

}  // namespace cjax::lower
