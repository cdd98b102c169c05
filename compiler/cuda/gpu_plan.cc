// plan_host_function: what is left of the host function after the GPU pipeline, read as steps.
#include <fmt/format.h>
#include <llvm/ADT/DenseMap.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/IR/BuiltinTypes.h>

#include "compiler/cpu/lowering.h"
#include "compiler/cuda/gpu_passes.h"
#include "ir/errors.h"

namespace cjax::lower {
namespace {

using runtime::cuda::GpuBuffer;
using runtime::cuda::GpuBufferRole;
using runtime::cuda::GpuOperand;
using runtime::cuda::GpuProgram;
using runtime::cuda::GpuStep;

size_t memref_bytes(mlir::MemRefType t) {
  const unsigned bits = t.getElementType().isIndex() ? 64 : t.getElementTypeBitWidth();
  return static_cast<size_t>(t.getNumElements()) * ((bits + 7) / 8);
}

class Planner {
 public:
  Planner(const Jaxpr& prepared, const std::string& where, const std::vector<std::string>& modules)
      : jaxpr_(prepared), where_(where), module_names_(modules) {}

  GpuProgram plan(mlir::ModuleOp module) {
    auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
    if (!main) fail("the lowered module has no main function");
    module_ = module;
    bind_arguments(main);
    for (mlir::Operation& op : main.getBody().front()) step(&op);
    return std::move(p_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UnsupportedError(fmt::format("cuda: {}{}", what, where_.empty() ? "" : " in " + where_));
  }

  std::string op_text(mlir::Operation* op) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os, mlir::OpPrintingFlags().skipRegions());
    return os.str();
  }

  int new_buffer(GpuBufferRole role, int index, size_t bytes, std::string data = "") {
    p_.buffers.push_back(GpuBuffer{role, index, bytes, std::move(data)});
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  // main(call_table, consts..., args..., outputs...): see lower_function.
  void bind_arguments(mlir::func::FuncOp main) {
    p_.name = where_;
    for (const Var& v : jaxpr_.invars) p_.in_avals.push_back(v.aval());
    const auto nconsts = static_cast<int>(jaxpr_.constvars.size());
    if (nconsts > 0 && jaxpr_.consts.size() != jaxpr_.constvars.size())
      fail("the program's constvars have no values");
    const std::vector<int> forwarded = forwarded_inputs(jaxpr_);
    mlir::Block& entry = main.getBody().front();
    unsigned arg = 1;
    for (int k = 0; k < nconsts; ++k) {
      const ConstValue& c = jaxpr_.consts[static_cast<size_t>(k)];
      const size_t bytes = c.aval.nbytes();
      buffers_[entry.getArgument(arg++)] =
          new_buffer(GpuBufferRole::constant, k, bytes,
                     std::string(static_cast<const char*>(c.data.get()), bytes));
    }
    for (size_t i = 0; i < jaxpr_.invars.size(); ++i)
      buffers_[entry.getArgument(arg++)] =
          new_buffer(GpuBufferRole::input, static_cast<int>(i), jaxpr_.invars[i].aval().nbytes());
    for (size_t o = 0; o < jaxpr_.outvars.size(); ++o) {
      p_.out_avals.push_back(jaxpr_.outvars[o].aval());
      const int f = forwarded[o];
      p_.forwarded.push_back(f < 0 ? -1 : f < nconsts ? -2 - f : f - nconsts);
      if (f >= 0) continue;
      buffers_[entry.getArgument(arg++)] =
          new_buffer(GpuBufferRole::output, static_cast<int>(o), jaxpr_.outvars[o].aval().nbytes());
    }
    if (arg != entry.getNumArguments()) fail("main's arguments do not match the program");
  }

  static std::string value_text(mlir::Value v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    v.print(os);
    return os.str();
  }

  int buffer_of(mlir::Value v) const {
    auto it = buffers_.find(v);
    if (it == buffers_.end())
      fail("a kernel or call reads a buffer the host function does not know: " + value_text(v));
    return it->second;
  }

  GpuOperand scalar(mlir::Value v) const {
    auto it = scalars_.find(v);
    if (it == scalars_.end())
      fail("a value computed on the host reaches a kernel or call: " + value_text(v));
    return it->second;
  }

  // A memref kernel argument as the NVVM lowering expands it: allocated and aligned pointers,
  // offset, sizes, strides.
  void memref_operands(mlir::Value v, std::vector<GpuOperand>& out) const {
    auto t = mlir::cast<mlir::MemRefType>(v.getType());
    llvm::SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (mlir::failed(mlir::getStridesAndOffset(t, strides, offset)) ||
        mlir::ShapedType::isDynamic(offset) || !t.hasStaticShape())
      fail("a kernel reads a buffer whose layout is not static");
    const int b = buffer_of(v);
    out.push_back({b, 0, 0});
    out.push_back({b, 0, 0});
    out.push_back({-1, 0, static_cast<uint64_t>(offset)});
    for (int64_t d : t.getShape()) out.push_back({-1, 0, static_cast<uint64_t>(d)});
    for (int64_t s : strides) {
      if (mlir::ShapedType::isDynamic(s)) fail("a kernel reads a buffer with dynamic strides");
      out.push_back({-1, 0, static_cast<uint64_t>(s)});
    }
  }

  uint32_t launch_size(mlir::Value v) const {
    const GpuOperand o = scalar(v);
    if (o.buffer >= 0 || o.bits == 0 || o.bits > 0x7fffffffULL)
      fail(fmt::format("a launch size of {} is out of range", o.bits));
    return static_cast<uint32_t>(o.bits);
  }

  void launch(mlir::gpu::LaunchFuncOp l) {
    GpuStep st;
    st.kind = GpuStep::Kind::launch;
    const std::string module = l.getKernelModuleName().str();
    auto it = std::find(module_names_.begin(), module_names_.end(), module);
    if (it == module_names_.end()) fail(fmt::format("kernel module {} was not compiled", module));
    st.module = static_cast<int>(it - module_names_.begin());
    st.kernel = l.getKernelName().str();
    st.grid = {launch_size(l.getGridSizeX()), launch_size(l.getGridSizeY()),
               launch_size(l.getGridSizeZ())};
    st.block = {launch_size(l.getBlockSizeX()), launch_size(l.getBlockSizeY()),
                launch_size(l.getBlockSizeZ())};
    if (st.grid[1] > 65535 || st.grid[2] > 65535 ||
        uint64_t{st.block[0]} * st.block[1] * st.block[2] > 1024)
      fail(fmt::format("a launch of {}x{}x{} blocks of {}x{}x{} threads is past CUDA's limits",
                       st.grid[0], st.grid[1], st.grid[2], st.block[0], st.block[1], st.block[2]));
    for (mlir::Value v : l.getKernelOperands()) {
      if (mlir::isa<mlir::MemRefType>(v.getType()))
        memref_operands(v, st.operands);
      else
        st.operands.push_back(scalar(v));
    }
    p_.steps.push_back(std::move(st));
  }

  void constant(mlir::arith::ConstantOp c) {
    mlir::Attribute a = c.getValue();
    if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(a))
      scalars_[c.getResult()] = {-1, 0, i.getValue().getZExtValue()};
    else if (auto f = mlir::dyn_cast<mlir::FloatAttr>(a))
      scalars_[c.getResult()] = {-1, 0, f.getValue().bitcastToAPInt().getZExtValue()};
    // Other constants (dense tensors) never reach a kernel's parameters.
  }

  void index_arithmetic(mlir::Operation* op) {
    const GpuOperand a = scalar(op->getOperand(0)), b = scalar(op->getOperand(1));
    GpuOperand r;
    if (mlir::isa<mlir::arith::AddIOp>(op)) {
      if (a.buffer >= 0 && b.buffer >= 0) fail("adding two addresses");
      r = a.buffer >= 0   ? GpuOperand{a.buffer, a.offset + static_cast<int64_t>(b.bits), 0}
          : b.buffer >= 0 ? GpuOperand{b.buffer, b.offset + static_cast<int64_t>(a.bits), 0}
                          : GpuOperand{-1, 0, a.bits + b.bits};
    } else {
      if (a.buffer >= 0 || b.buffer >= 0) fail("multiplying an address");
      r = {-1, 0, a.bits * b.bits};
    }
    scalars_[op->getResult(0)] = r;
  }

  void global(mlir::memref::GetGlobalOp g) {
    auto decl = module_.lookupSymbol<mlir::memref::GlobalOp>(g.getName());
    auto t = mlir::cast<mlir::MemRefType>(g.getType());
    auto init = decl ? mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(decl.getInitialValueAttr())
                     : nullptr;
    if (!init) fail(fmt::format("the global {} has no dense value", g.getName().str()));
    const size_t bytes = memref_bytes(t);
    llvm::ArrayRef<char> raw = init.getRawData();
    std::string data;
    if (init.isSplat())
      while (data.size() < bytes) data.append(raw.data(), raw.size());
    else
      data.assign(raw.data(), raw.size());
    if (data.size() != bytes) fail("a global's data is not its size (packed bools?)");
    buffers_[g.getResult()] = new_buffer(GpuBufferRole::constant, -1, bytes, std::move(data));
  }

  void step(mlir::Operation* op) {
    if (auto c = mlir::dyn_cast<mlir::arith::ConstantOp>(op)) return constant(c);
    if (auto a = mlir::dyn_cast<mlir::memref::AllocOp>(op)) {
      buffers_[a.getResult()] = new_buffer(GpuBufferRole::temp, 0, memref_bytes(a.getType()));
      return;
    }
    if (auto a = mlir::dyn_cast<mlir::memref::AllocaOp>(op)) {
      tables_[a.getResult()].assign(static_cast<size_t>(a.getType().getNumElements()), {});
      return;
    }
    if (auto s = mlir::dyn_cast<mlir::memref::StoreOp>(op)) {
      auto table = tables_.find(s.getMemRef());
      if (table == tables_.end() || s.getIndices().size() != 1)
        fail("a store on the host: " + op_text(op));
      const uint64_t slot = scalar(s.getIndices()[0]).bits;
      if (slot >= table->second.size()) fail("a runtime call's table is overrun");
      table->second[slot] = scalar(s.getValue());
      return;
    }
    if (auto c = mlir::dyn_cast<mlir::memref::CastOp>(op)) {
      if (auto table = tables_.find(c.getSource()); table != tables_.end()) {
        std::vector<GpuOperand> entries = table->second;  // inserting may move the map's storage
        tables_[c.getResult()] = std::move(entries);
        return;
      }
      buffers_[c.getResult()] = buffer_of(c.getSource());
      return;
    }
    if (auto view = mlir::dyn_cast<mlir::ViewLikeOpInterface>(op)) {
      buffers_[op->getResult(0)] = buffer_of(view.getViewSource());
      return;
    }
    if (auto e = mlir::dyn_cast<mlir::memref::ExtractAlignedPointerAsIndexOp>(op)) {
      scalars_[e.getResult()] = {buffer_of(e.getSource()), 0, 0};
      return;
    }
    if (mlir::isa<mlir::arith::AddIOp, mlir::arith::MulIOp>(op)) return index_arithmetic(op);
    if (auto g = mlir::dyn_cast<mlir::memref::GetGlobalOp>(op)) return global(g);
    if (auto call = mlir::dyn_cast<mlir::func::CallOp>(op)) {
      if (call.getCallee() != kRuntimeCallSymbol || call.getNumOperands() != 3)
        fail("a call on the host: " + op_text(op));
      auto table = tables_.find(call.getOperand(2));
      if (table == tables_.end()) fail("a runtime call without its table");
      GpuStep st;
      st.kind = GpuStep::Kind::call;
      st.call = static_cast<int>(scalar(call.getOperand(1)).bits);
      st.operands = table->second;
      p_.steps.push_back(std::move(st));
      return;
    }
    if (auto l = mlir::dyn_cast<mlir::gpu::LaunchFuncOp>(op)) return launch(l);
    if (auto d = mlir::dyn_cast<mlir::memref::DeallocOp>(op)) {
      const int b = buffer_of(d.getMemref());
      if (p_.buffers[static_cast<size_t>(b)].role != GpuBufferRole::temp)
        fail("the host function frees a buffer it did not allocate");
      GpuStep st;
      st.kind = GpuStep::Kind::free;
      st.buffer = b;
      p_.steps.push_back(std::move(st));
      return;
    }
    if (mlir::isa<mlir::func::ReturnOp>(op)) return;
    fail("host code the GPU program cannot hold: " + op_text(op));
  }

  const Jaxpr& jaxpr_;
  std::string where_;
  const std::vector<std::string>& module_names_;
  mlir::ModuleOp module_;
  GpuProgram p_;
  llvm::DenseMap<mlir::Value, int> buffers_;
  llvm::DenseMap<mlir::Value, GpuOperand> scalars_;
  llvm::DenseMap<mlir::Value, std::vector<GpuOperand>> tables_;
};

}  // namespace

GpuProgram plan_host_function(mlir::ModuleOp module, const Jaxpr& prepared,
                              const std::string& where,
                              const std::vector<std::string>& kernel_modules) {
  return Planner(prepared, where, kernel_modules).plan(module);
}

}  // namespace cjax::lower
