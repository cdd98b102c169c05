#include "compiler/cuda/gpu_passes.h"

#include <fmt/format.h>
#include <llvm/Support/TargetSelect.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Linalg/Transforms/Transforms.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/SCF/Utils/Utils.h>
#include <mlir/IR/PatternMatch.h>
#include <mlir/Interfaces/SideEffectInterfaces.h>
#include <mlir/Target/LLVM/NVVM/Target.h>
#include <mlir/Target/LLVMIR/Dialect/All.h>

#include <mutex>
#include <numeric>
#include <set>

#include "compiler/cpu/mlir_pipeline.h"
#include "ir/errors.h"

namespace cjax::lower {
namespace {

// Ops the host function keeps: they allocate, free, name buffers and addresses, or call.
bool stays_on_host(mlir::Operation* op) {
  if (mlir::isa<mlir::arith::ConstantOp, mlir::memref::AllocOp, mlir::memref::AllocaOp,
                mlir::memref::DeallocOp, mlir::memref::ExtractAlignedPointerAsIndexOp,
                mlir::memref::GetGlobalOp, mlir::memref::SubViewOp, mlir::memref::CollapseShapeOp,
                mlir::memref::ExpandShapeOp, mlir::memref::ReinterpretCastOp, mlir::memref::CastOp,
                mlir::func::CallOp, mlir::func::ReturnOp, mlir::scf::ParallelOp>(op))
    return true;
  // A runtime call's table of pointers, and the address arithmetic that fills it.
  if (auto store = mlir::dyn_cast<mlir::memref::StoreOp>(op))
    return store.getMemRef().getDefiningOp<mlir::memref::AllocaOp>() != nullptr;
  if (mlir::isa<mlir::arith::AddIOp, mlir::arith::MulIOp>(op))
    return op->getResult(0).getType().isIndex();
  return false;
}

// Why `op`, host code, cannot become a kernel of one thread: it holds kernels, allocations or
// calls (control flow around them: a scan, a while loop, a cond).
std::string holds_host_work(mlir::Operation* op) {
  std::string why;
  op->walk([&](mlir::Operation* inner) {
    if (inner == op || !why.empty()) return;
    if (mlir::isa<mlir::scf::ParallelOp>(inner)) why = "parallel loops (kernels)";
    if (mlir::isa<mlir::memref::AllocOp, mlir::memref::DeallocOp>(inner))
      why = "allocations or frees";
    if (mlir::isa<mlir::func::CallOp>(inner)) why = "runtime calls";
  });
  return why;
}

std::string in_where(const std::string& where) {
  return where.empty() ? "" : " in " + where;
}

// Moves scalar host code that only kernels read (a PRNG key loaded from an argument and mixed)
// into each kernel that reads it: it is recomputed by every thread instead of read back by the
// host. Loads move only from the function's arguments, which nothing writes.
void sink_scalars_into_kernels(mlir::Block& body) {
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : body) ops.push_back(&op);
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    mlir::Operation* op = *it;
    if (stays_on_host(op) || op->getNumRegions() != 0 || op->getNumResults() != 1) continue;
    auto load = mlir::dyn_cast<mlir::memref::LoadOp>(op);
    if (load ? !mlir::isa<mlir::BlockArgument>(load.getMemRef()) : !mlir::isPure(op)) continue;
    std::set<mlir::Operation*> loops;
    bool only_kernels = !op->use_empty();
    for (mlir::Operation* user : op->getUsers()) {
      auto loop = mlir::dyn_cast<mlir::scf::ParallelOp>(body.findAncestorOpInBlock(*user));
      only_kernels = only_kernels && loop && loop != op;
      if (loop) loops.insert(loop);
    }
    if (!only_kernels) continue;
    for (mlir::Operation* loop : loops) {
      mlir::Block& inner = loop->getRegion(0).front();
      mlir::OpBuilder b(&inner, inner.begin());
      mlir::Operation* copy = b.clone(*op);
      op->getResult(0).replaceUsesWithIf(copy->getResult(0), [&](mlir::OpOperand& use) {
        return loop->isProperAncestor(use.getOwner());
      });
    }
    op->erase();
  }
}

void wrap_in_one_iteration(const std::vector<mlir::Operation*>& group) {
  mlir::OpBuilder b(group.front());
  const mlir::Location loc = group.front()->getLoc();
  mlir::Value c0 = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value c1 = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<mlir::scf::ParallelOp>(loc, mlir::ValueRange{c0}, mlir::ValueRange{c1},
                                              mlir::ValueRange{c1});
  mlir::Block* body = loop.getBody();
  if (body->empty() || !body->back().hasTrait<mlir::OpTrait::IsTerminator>()) {
    b.setInsertionPointToEnd(body);
    b.create<mlir::scf::ReduceOp>(loc);
  }
  for (mlir::Operation* op : group) op->moveBefore(body->getTerminator());
}

}  // namespace

std::unique_ptr<mlir::MLIRContext> make_gpu_context() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The NVPTX back end (the CPU pipeline initializes only the native target).
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
  auto ctx = make_context();
  mlir::DialectRegistry registry;
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ctx->appendDialectRegistry(registry);
  return ctx;
}

void order_loops_for_gpu(mlir::func::FuncOp host) {
  mlir::IRRewriter rewriter(host.getContext());
  std::vector<mlir::linalg::GenericOp> generics;
  host.walk([&](mlir::linalg::GenericOp g) { generics.push_back(g); });
  for (mlir::linalg::GenericOp g : generics) {
    const auto iterators = g.getIteratorTypesArray();
    std::vector<unsigned> order;
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] == mlir::utils::IteratorType::parallel) order.push_back(i);
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] != mlir::utils::IteratorType::parallel) order.push_back(i);
    bool identity = true;
    for (unsigned i = 0; i < order.size(); ++i) identity = identity && order[i] == i;
    if (identity) continue;
    rewriter.setInsertionPoint(g);
    if (mlir::failed(mlir::linalg::interchangeGenericOp(rewriter, g, order)))
      throw Error("the GPU back end could not reorder a loop nest's dimensions");
  }
  std::vector<mlir::memref::CopyOp> copies;
  host.walk([&](mlir::memref::CopyOp c) { copies.push_back(c); });
  for (mlir::memref::CopyOp c : copies) {
    rewriter.setInsertionPoint(c);
    rewriter.create<mlir::linalg::CopyOp>(c.getLoc(), c.getSource(), c.getTarget());
    rewriter.eraseOp(c);
  }
}

void wrap_host_code_for_gpu(mlir::func::FuncOp host, const std::string& where, bool strict) {
  mlir::Block& body = host.getBody().front();
  sink_scalars_into_kernels(body);
  std::vector<std::vector<mlir::Operation*>> groups(1);
  for (mlir::Operation& op : body) {
    if (stays_on_host(&op)) {
      if (!groups.back().empty()) groups.emplace_back();
      continue;
    }
    if (std::string why = holds_host_work(&op); !why.empty()) {
      if (strict)
        throw UnsupportedError(fmt::format(
            "cuda: the GPU back end runs straight-line programs, and this one's {} holds {} "
            "(control flow such as scan, while or cond is not supported on the GPU yet){}",
            op.getName().getStringRef().str(), why, in_where(where)));
      if (!groups.back().empty()) groups.emplace_back();
      continue;
    }
    groups.back().push_back(&op);
  }
  for (const std::vector<mlir::Operation*>& group : groups) {
    if (group.empty()) continue;
    const std::set<mlir::Operation*> members(group.begin(), group.end());
    bool escapes = false;
    for (mlir::Operation* op : group)
      for (mlir::Operation* user : op->getUsers())
        escapes = escapes || !members.count(body.findAncestorOpInBlock(*user));
    if (escapes) {
      if (strict)
        throw UnsupportedError(fmt::format(
            "cuda: the GPU back end cannot make a kernel of host code ({}) whose values the "
            "host reads afterwards{}",
            group.front()->getName().getStringRef().str(), in_where(where)));
      continue;
    }
    wrap_in_one_iteration(group);
  }
  mlir::IRRewriter rewriter(host.getContext());
  std::vector<mlir::scf::ParallelOp> loops;
  for (mlir::Operation& op : body)
    if (auto loop = mlir::dyn_cast<mlir::scf::ParallelOp>(op); loop && loop.getNumLoops() > 1)
      loops.push_back(loop);
  for (mlir::scf::ParallelOp loop : loops) {
    std::vector<unsigned> all(loop.getNumLoops());
    std::iota(all.begin(), all.end(), 0u);
    rewriter.setInsertionPoint(loop);
    mlir::collapseParallelLoops(rewriter, loop, {all});
  }
}

}  // namespace cjax::lower
