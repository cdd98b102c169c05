#include "compiler/cpu/free_after_last_use.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallVector.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>

#include <vector>

namespace cjax::lower {

mlir::Operation* last_reader_in_block(mlir::Value buffer, mlir::Block* block,
                                      mlir::Operation* dealloc,
                                      llvm::DenseSet<mlir::Value>* derived_out) {
  mlir::Operation* last = nullptr;
  llvm::SmallVector<mlir::Value> work{buffer};
  llvm::DenseSet<mlir::Value> own;
  llvm::DenseSet<mlir::Value>& derived = derived_out ? *derived_out : own;
  derived.insert(buffer);
  auto add = [&](mlir::Value v) {
    if (derived.insert(v).second) work.push_back(v);
  };
  while (!work.empty()) {
    mlir::Value v = work.pop_back_val();
    for (mlir::OpOperand& use : v.getUses()) {
      mlir::Operation* user = use.getOwner();
      if (user == dealloc) continue;
      // What may lead to the buffer: views (memref results, also of the loop or branch whose
      // region yields one) and its address taken as a number, with whatever is computed from
      // that address. A value loaded from the buffer is data and leads nowhere; so do the
      // results of a loop that only reads the buffer in its body (a scan over its rows returns
      // new arrays, not views of it).
      const bool address = !mlir::isa<mlir::BaseMemRefType>(v.getType());
      mlir::Operation* in_block = user;
      bool reaches_results = true;
      for (;;) {
        if (reaches_results)
          for (mlir::Value r : in_block->getResults())
            if (address || mlir::isa<mlir::BaseMemRefType>(r.getType()) ||
                mlir::isa<mlir::memref::ExtractAlignedPointerAsIndexOp>(in_block))
              add(r);
        if (in_block->getBlock() == block) break;
        reaches_results = in_block->hasTrait<mlir::OpTrait::IsTerminator>();
        in_block = in_block->getParentOp();
        if (!in_block) return dealloc;  // read outside the block: leave the dealloc where it is
      }
      // An address stored as data (a pointer in a runtime call's argument list): the memory it
      // was stored into now leads to the buffer too.
      if (address && user->getNumResults() == 0)
        for (mlir::Value other : user->getOperands())
          if (mlir::isa<mlir::BaseMemRefType>(other.getType())) add(other);
      if (!last || last->isBeforeInBlock(in_block)) last = in_block;
    }
  }
  return last;
}

void free_after_last_use(mlir::ModuleOp module) {
  std::vector<mlir::memref::DeallocOp> deallocs;
  module.walk([&](mlir::memref::DeallocOp d) { deallocs.push_back(d); });
  for (mlir::memref::DeallocOp d : deallocs) {
    mlir::Value buffer = d.getMemref();
    mlir::Block* block = d->getBlock();
    mlir::Operation* def = buffer.getDefiningOp();
    if (def ? def->getBlock() != block : buffer.getParentBlock() != block) continue;
    mlir::Operation* last = last_reader_in_block(buffer, block, d);
    if (last == d.getOperation()) continue;
    if (!last) last = def;
    if (!last) {
      d->moveBefore(&block->front());
    } else if (last->isBeforeInBlock(d)) {
      d->moveAfter(last);
    }
  }
}

}  // namespace cjax::lower
