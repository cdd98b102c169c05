// Internal to compiler/cpu/: freeing a buffer as soon as nothing reads it any more.
#pragma once

#include <llvm/ADT/DenseSet.h>
#include <mlir/IR/BuiltinOps.h>

namespace cjax::lower {

// Moves every memref.dealloc of a buffer defined in the dealloc's own block up to just after
// the last op of that block that reads the buffer, directly or through anything derived from
// it: a view, a pointer taken from it, a list the pointer was stored into (how runtime calls
// receive their buffers), a loop or branch that uses it inside.
//
// Why: MLIR 19's ownership-based deallocation frees a block's buffers at the end of the block,
// so a function (or a loop body) holds every buffer it allocates until it returns. A
// transformer layer's backward pass then held 175 MiB where freeing at last use, as the
// interpreter does, needs about 100.
void free_after_last_use(mlir::ModuleOp module);

// The op of `block` that reads `buffer` last, directly or through anything derived from it
// (`dealloc` aside): nullptr when none does, `dealloc` when something outside the block reads it.
// `derived`, when given, receives every value that leads to the buffer (`buffer` included).
mlir::Operation* last_reader_in_block(mlir::Value buffer, mlir::Block* block,
                                      mlir::Operation* dealloc,
                                      llvm::DenseSet<mlir::Value>* derived = nullptr);

}  // namespace cjax::lower
