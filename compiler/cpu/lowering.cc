#include "compiler/cpu/lowering.h"

#include <fmt/format.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>

#include <map>
#include <mutex>

#include "ir/call_body.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "ir/rules/per_primitive.h"

namespace cjax::lower {
namespace {

class Table final : public LowerRuleTable {
 public:
  Table() {
    register_elementwise_rules(*this);
    register_structural_rules(*this);
    register_reduction_rules(*this);
    register_dot_rules(*this);
    register_control_flow_rules(*this);
    register_random_rules(*this);
    register_gather_scatter_rules(*this);
  }
  void add(std::string_view prim, LowerRule rule) override {
    if (find_primitive(prim))
      builtin_.define(prim) = std::move(rule);
    else
      by_name_[std::string(prim)] = std::move(rule);  // JAX primitives cjax reads as opaque ones
  }
  const LowerRule* find(const Primitive& prim) const {
    if (const LowerRule* rule = builtin_.find(prim)) return *rule ? rule : nullptr;
    auto it = by_name_.find(prim.name);
    return it == by_name_.end() ? nullptr : &it->second;
  }

 private:
  PerPrimitive<LowerRule> builtin_;
  std::map<std::string, LowerRule, std::less<>> by_name_;
};

std::string location_of(const Eqn& e) {
  return e.source.known() ? " at " + e.source.summarize() : "";
}

// A constant tensor with a const's bytes (sub-jaxpr consts; top-level ones are arguments).
mlir::Value const_tensor(mlir::OpBuilder& b, mlir::Location loc, const ConstValue& c) {
  if (!c.data)
    throw UnsupportedError(
        fmt::format("lower: the constant {} has no value (elided)", c.aval.str_short()));
  auto type = tensor_type(b, c.aval, "constant");
  const char* bytes = static_cast<const char*>(c.data.get());
  auto attr =
      mlir::DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(bytes, c.aval.nbytes()));
  return b.create<mlir::arith::ConstantOp>(loc, type, attr);
}

// A call of the function compiled for a repeated call body (state.outlined), made on first use:
// `@body<N>(call_table, args...) -> results`, lowered once, with its own repeated calls outlined
// in turn.
std::vector<mlir::Value> call_outlined(LoweringState& state, const Jaxpr& body,
                                       const std::string* key,
                                       const std::vector<mlir::Value>& ins) {
  mlir::OpBuilder& b = state.b;
  const mlir::Location loc = b.getUnknownLoc();
  std::vector<mlir::Type> result_types;
  for (const Atom& a : body.outvars) result_types.push_back(tensor_type(b, a.aval(), "result"));
  auto [it, fresh] = state.outlined->function_of.try_emplace(key);
  if (fresh) {
    it->second = fmt::format("body{}", state.outlined->function_of.size() - 1);
    std::vector<mlir::Type> arg_types = {b.getI64Type()};
    for (mlir::Value v : ins) arg_types.push_back(v.getType());
    mlir::OpBuilder fb(state.module.getContext());
    fb.setInsertionPointToEnd(state.module.getBody());
    auto func =
        fb.create<mlir::func::FuncOp>(loc, it->second, fb.getFunctionType(arg_types, result_types));
    func.setPrivate();
    mlir::Block* entry = func.addEntryBlock();
    fb.setInsertionPointToStart(entry);
    LoweringState inner{fb,
                        state.module,
                        state.calls,
                        {},
                        state.where,
                        entry->getArgument(0),
                        state.dot_path,
                        state.memory_transfers,
                        state.outlined};
    const std::vector<mlir::Value> args(entry->args_begin() + 1, entry->args_end());
    fb.create<mlir::func::ReturnOp>(loc, lower_jaxpr_body(inner, body, args));
  }
  // Functions take buffers of the identity layout: a slice (a view with strides and an offset),
  // or a reshape of one, is copied into one of its own first.
  auto is_slice = [](mlir::Value v) {
    for (mlir::Operation* def = v.getDefiningOp(); def;) {
      if (mlir::isa<mlir::tensor::ExtractSliceOp>(def)) return true;
      if (!mlir::isa<mlir::tensor::CollapseShapeOp, mlir::tensor::ExpandShapeOp>(def)) return false;
      def = def->getOperand(0).getDefiningOp();
    }
    return false;
  };
  std::vector<mlir::Value> operands = {state.call_table};
  for (mlir::Value in : ins) {
    if (is_slice(in)) {
      auto type = mlir::cast<mlir::RankedTensorType>(in.getType());
      mlir::Value empty =
          b.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
      in = b.create<mlir::linalg::CopyOp>(loc, in, empty).getResult(0);
    }
    operands.push_back(in);
  }
  auto call = b.create<mlir::func::CallOp>(loc, it->second, result_types, operands);
  return {call.result_begin(), call.result_end()};
}

}  // namespace

const LowerRule* find_lower_rule(const Primitive& prim) {
  static const Table table;
  return table.find(prim);
}

void not_native(const EqnLowering& el, const std::string& why) {
  throw NotNative{why};
}

std::string unsupported_message(const EqnLowering& el, const std::string& what) {
  return fmt::format("lower: {}: {}{}{}", el.eqn.prim->name, what, location_of(el.eqn),
                     el.state.where.empty() ? "" : " in " + el.state.where);
}

std::vector<mlir::Value> lower_jaxpr_body(LoweringState& state, const Jaxpr& jaxpr,
                                          const std::vector<mlir::Value>& args) {
  std::unordered_map<const void*, mlir::Value> env;
  mlir::OpBuilder& b = state.b;
  const mlir::Location unknown = b.getUnknownLoc();
  size_t next = 0;
  const bool consts_given = args.size() == jaxpr.constvars.size() + jaxpr.invars.size();
  for (size_t i = 0; i < jaxpr.constvars.size(); ++i) {
    if (consts_given)
      env[jaxpr.constvars[i].id()] = args[next++];
    else if (i < jaxpr.consts.size())
      env[jaxpr.constvars[i].id()] = const_tensor(b, unknown, jaxpr.consts[i]);
    else
      throw UnsupportedError("lower: a sub-jaxpr's constvar has no value");
  }
  if (args.size() - next != jaxpr.invars.size())
    throw TypeError(fmt::format("lower: {} arguments for a jaxpr of {} inputs", args.size() - next,
                                jaxpr.invars.size()));
  for (const Var& v : jaxpr.invars) env[v.id()] = args[next++];

  auto value_of = [&](const Atom& a) -> mlir::Value {
    if (a.is_literal()) return literal_tensor(b, unknown, a.literal());
    auto it = env.find(a.var().id());
    if (it == env.end()) throw VerifyError("lower: a variable is read before it is defined");
    return it->second;
  };

  for (const Eqn& e : jaxpr.eqns) {
    std::vector<mlir::Value> ins;
    for (const Atom& a : e.inputs) ins.push_back(value_of(a));
    std::vector<mlir::Value> outs;
    // A call-like eqn (ir/call_body.h) is lowered by lowering its body inline: a jit boundary
    // means nothing to one compiled function, and remat2 has done its work once the backward
    // program exists. A body met at several places is compiled once, as a function.
    if (const Jaxpr* callee = call_body(e)) {
      const std::string* key = state.outlined ? state.outlined->repeated.key(e) : nullptr;
      outs = key ? call_outlined(state, *callee, key, ins) : lower_jaxpr_body(state, *callee, ins);
    } else {
      const LowerRule* rule = find_lower_rule(*e.prim);
      EqnLowering el{state, e, unknown};
      try {
        if (!rule) not_native(el, "no lowering rule for this primitive");
        outs = (*rule)(el, ins);
      } catch (const NotNative& n) {
        outs = kernel_fallback(el, ins, n.why);
      }
    }
    if (outs.size() != e.outputs.size())
      throw Error(fmt::format("lower: {}: the rule made {} results for {} outputs", e.prim->name,
                              outs.size(), e.outputs.size()));
    for (size_t i = 0; i < outs.size(); ++i) env[e.outputs[i].id()] = outs[i];
  }
  std::vector<mlir::Value> results;
  for (const Atom& a : jaxpr.outvars) results.push_back(value_of(a));
  return results;
}

std::vector<int> forwarded_inputs(const Jaxpr& jaxpr) {
  std::unordered_map<const void*, int> position;
  int k = 0;
  for (const Var& v : jaxpr.constvars) position.emplace(v.id(), k++);
  for (const Var& v : jaxpr.invars) position.emplace(v.id(), k++);
  std::vector<int> out;
  for (const Atom& a : jaxpr.outvars) {
    auto it = a.is_var() ? position.find(a.var().id()) : position.end();
    out.push_back(it == position.end() ? -1 : it->second);
  }
  return out;
}

mlir::OwningOpRef<mlir::ModuleOp> new_module(mlir::MLIRContext& ctx) {
  mlir::OpBuilder b(&ctx);
  const mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  // The callback every runtime call goes through: (handle, pointers of its buffers).
  auto index_buf = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getIndexType());
  auto callback = b.create<mlir::func::FuncOp>(
      loc, kRuntimeCallSymbol, b.getFunctionType({b.getI64Type(), b.getI64Type(), index_buf}, {}));
  callback.setPrivate();
  return module;
}

namespace {

// Writes `result` over the input buffer `dest` once everything is computed (a copy placed at the
// end, so no read of the input's old values can come after it), unless the result already lies
// there (bufferization may have computed it in place).
void copy_into_input(mlir::OpBuilder& b, mlir::Location loc, mlir::Value result, mlir::Value dest) {
  mlir::Value src = b.create<mlir::bufferization::ToMemrefOp>(loc, dest.getType(), result);
  auto address = [&](mlir::Value m) {
    return b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, m).getResult();
  };
  mlir::Value elsewhere = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ne,
                                                        address(src), address(dest));
  auto if_op = b.create<mlir::scf::IfOp>(loc, elsewhere, /*withElseRegion=*/false);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(if_op.thenBlock());
  b.create<mlir::memref::CopyOp>(loc, src, dest);
}

}  // namespace

void lower_function(mlir::ModuleOp module, const Jaxpr& jaxpr,
                    std::vector<std::unique_ptr<RuntimeCall>>& calls, const std::string& where,
                    const std::string& name, DotPath dot_path, bool memory_transfers,
                    OutlinedCalls* outlined, const std::vector<bool>& writable,
                    const std::vector<int>& tied) {
  mlir::OpBuilder b(module.getContext());
  const mlir::Location loc = b.getUnknownLoc();
  b.setInsertionPointToEnd(module.getBody());

  std::vector<mlir::Type> arg_types = {b.getI64Type()};
  std::vector<ShapedArray> in_avals;
  for (const Var& v : jaxpr.constvars) in_avals.push_back(v.aval());
  for (const Var& v : jaxpr.invars) in_avals.push_back(v.aval());
  for (const ShapedArray& a : in_avals) arg_types.push_back(memref_type(b, a, "argument"));
  // Outputs that are inputs are handed back by the executable as they are: no buffer, no copy.
  const std::vector<int> forwarded = forwarded_inputs(jaxpr);
  auto tied_input = [&](size_t i) { return i < tied.size() && forwarded[i] < 0 ? tied[i] : -1; };
  std::vector<size_t> out_arg(jaxpr.outvars.size(), 0);  // output i's memref argument index
  size_t next_out = in_avals.size();
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    if (tied_input(i) >= 0) out_arg[i] = static_cast<size_t>(tied_input(i));
    if (forwarded[i] >= 0 || tied_input(i) >= 0) continue;
    out_arg[i] = next_out++;
    arg_types.push_back(memref_type(b, jaxpr.outvars[i].aval(), "output"));
  }
  auto func = b.create<mlir::func::FuncOp>(loc, name, b.getFunctionType(arg_types, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  // Every buffer argument can be taken as noalias (mark_noalias_buffers): outputs are fresh
  // buffers of their own, inputs that may share a buffer are only read, and a writable input
  // shares its buffer with no other.
  func->setAttr(kNoaliasBuffers, b.getUnitAttr());
  mlir::Block* entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  LoweringState state{b,        module,           calls,   {}, where, entry->getArgument(0),
                      dot_path, memory_transfers, outlined};
  // Block argument k + 1 is memref argument k (after the call table).
  auto memref_arg = [&](size_t k) { return entry->getArgument(static_cast<unsigned>(k + 1)); };
  std::vector<mlir::Value> args;
  for (size_t i = 0; i < in_avals.size(); ++i)
    args.push_back(b.create<mlir::bufferization::ToTensorOp>(
        loc, memref_arg(i), /*restrict=*/true, /*writable=*/i < writable.size() && writable[i]));
  // An output a runtime call produces may be written straight into the caller's buffer, when it
  // is returned once and is not also an input.
  std::unordered_map<const void*, int> uses;
  for (const Atom& a : jaxpr.outvars)
    if (a.is_var()) ++uses[a.var().id()];
  for (const Var& v : jaxpr.constvars) uses[v.id()] += 2;
  for (const Var& v : jaxpr.invars) uses[v.id()] += 2;
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i) {
    const Atom& a = jaxpr.outvars[i];
    if (a.is_var() && uses[a.var().id()] == 1 && tied_input(i) < 0)
      state.output_buffers[a.var().id()] = memref_arg(out_arg[i]);
  }

  std::vector<mlir::Value> results = lower_jaxpr_body(state, jaxpr, args);
  for (size_t i = 0; i < results.size(); ++i) {
    if (forwarded[i] >= 0) continue;
    mlir::Value dest = memref_arg(out_arg[i]);
    if (tied_input(i) >= 0) {
      copy_into_input(b, loc, results[i], dest);
      continue;
    }
    // A result already in its buffer (to_tensor of that very buffer) needs no copy.
    if (auto t = results[i].getDefiningOp<mlir::bufferization::ToTensorOp>();
        t && t.getMemref() == dest)
      continue;
    auto m = b.create<mlir::bufferization::MaterializeInDestinationOp>(loc, mlir::TypeRange{},
                                                                       results[i], dest);
    m.setRestrict(true);
    m.setWritable(true);
  }
  b.create<mlir::func::ReturnOp>(loc);
}

}  // namespace cjax::lower
