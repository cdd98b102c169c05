// Runtime calls: eqns whose compiled form is a call back into C++ from the JIT'd code.
// dot_general goes to OpenBLAS through a plan made at compile time; any primitive the other
// rule files do not compile natively (integer division, cumulative ops, control flow, ...) runs
// the interpreter's kernel on the compiled code's buffers.
#include <fmt/format.h>
#include <mlir/IR/Builders.h>

#include <cstring>
#include <exception>

#include "compiler/cpu/lowering.h"
#include "compiler/cpu/runtime_symbols.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "runtime/blas_dot.h"
#include "runtime/interpreter.h"

namespace cjax::lower {
namespace {

class DotCall final : public RuntimeCall {
 public:
  explicit DotCall(runtime::DotPlan plan) : plan_(std::move(plan)) {}
  void run(void* const* p) const override { runtime::run_dot(plan_, p[0], p[1], p[2]); }
  std::string describe() const override {
    // The gemm as BLAS runs it: op(A)[m,k] @ op(B)[k,n], each operand read transposed ("^T")
    // or first packed into the gemm layout ("packed"), times the batch.
    auto operand = [](bool trans, bool packed) {
      return fmt::format("{}{}", trans ? "^T" : "", packed ? " packed" : "");
    };
    return fmt::format("dot_general via BLAS: {} x [{}x{}]{} @ [{}x{}]{}", plan_.batch, plan_.m,
                       plan_.k, operand(plan_.trans_lhs, !plan_.lhs_perm.empty()), plan_.k, plan_.n,
                       operand(plan_.trans_rhs, !plan_.rhs_perm.empty()));
  }

 private:
  runtime::DotPlan plan_;
};

class KernelCall final : public RuntimeCall {
 public:
  KernelCall(const Eqn& e)
      : prim_(e.prim),
        params_(e.params),
        in_avals_(avals_of(std::span<const Atom>(e.inputs))),
        out_avals_(avals_of(std::span<const Var>(e.outputs))) {}

  void run(void* const* p) const override {
    std::vector<runtime::Buffer> ins;
    for (size_t i = 0; i < in_avals_.size(); ++i)
      ins.push_back(runtime::Buffer::borrow(in_avals_[i], p[i]));
    std::vector<runtime::Buffer> outs = runtime::apply_primitive(*prim_, params_, ins, out_avals_);
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].nbytes() > 0) std::memcpy(p[ins.size() + i], outs[i].data(), outs[i].nbytes());
  }
  std::string describe() const override {
    return fmt::format("{} via the interpreter's kernel", prim_->name);
  }

 private:
  const Primitive* prim_;
  Params params_;
  std::vector<ShapedArray> in_avals_, out_avals_;
};

}  // namespace

std::vector<mlir::Value> blas_dot(EqnLowering& el, const std::vector<mlir::Value>& in,
                                  runtime::DotPlan plan) {
  auto call = std::make_unique<DotCall>(std::move(plan));
  return emit_runtime_call(el, std::move(call), in, {el.eqn.outputs[0].aval()});
}

std::vector<mlir::Value> kernel_fallback(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                                         const std::string& why) {
  if (!runtime::has_kernel(el.eqn.prim->name))
    throw UnsupportedError(unsupported_message(
        el, fmt::format("{}, and the interpreter has no kernel for it either", why)));
  auto call = std::make_unique<KernelCall>(el.eqn);
  return emit_runtime_call(el, std::move(call), inputs,
                           avals_of(std::span<const Var>(el.eqn.outputs)));
}

}  // namespace cjax::lower
