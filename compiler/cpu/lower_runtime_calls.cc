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
#include "ir/print/printer.h"
#include "runtime/blas_dot.h"
#include "runtime/interpreter.h"

namespace cjax::lower {
namespace {

// What a runtime call keeps of its eqn: enough to run it, or to print it as a jaxpr.
struct EqnSignature {
  explicit EqnSignature(const Eqn& e)
      : prim(e.prim),
        params(e.params),
        in_avals(avals_of(std::span<const Atom>(e.inputs))),
        out_avals(avals_of(std::span<const Var>(e.outputs))) {}
  const Primitive* prim;
  Params params;
  std::vector<ShapedArray> in_avals, out_avals;

  std::string jaxpr_text() const {
    Jaxpr j;
    Eqn e{prim, {}, {}, params, {}};
    for (const ShapedArray& a : in_avals) {
      j.invars.emplace_back(a);
      e.inputs.emplace_back(j.invars.back());
    }
    for (const ShapedArray& a : out_avals) {
      e.outputs.emplace_back(a);
      j.outvars.emplace_back(e.outputs.back());
    }
    j.eqns.push_back(std::move(e));
    return to_string(j);
  }
};

class DotCall final : public RuntimeCall {
 public:
  DotCall(runtime::DotPlan plan, const Eqn& e) : plan_(std::move(plan)), eqn_(e) {}
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
  std::string jaxpr_text() const override { return eqn_.jaxpr_text(); }

 private:
  runtime::DotPlan plan_;
  EqnSignature eqn_;
};

class KernelCall final : public RuntimeCall {
 public:
  explicit KernelCall(const Eqn& e) : eqn_(e) {}

  void run(void* const* p) const override {
    std::vector<runtime::Buffer> ins;
    for (size_t i = 0; i < eqn_.in_avals.size(); ++i)
      ins.push_back(runtime::Buffer::borrow(eqn_.in_avals[i], p[i]));
    std::vector<runtime::Buffer> outs =
        runtime::apply_primitive(*eqn_.prim, eqn_.params, ins, eqn_.out_avals);
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].nbytes() > 0) std::memcpy(p[ins.size() + i], outs[i].data(), outs[i].nbytes());
  }
  std::string describe() const override {
    return fmt::format("{} via the interpreter's kernel", eqn_.prim->name);
  }
  std::string jaxpr_text() const override { return eqn_.jaxpr_text(); }

 private:
  EqnSignature eqn_;
};

}  // namespace

std::vector<mlir::Value> blas_dot(EqnLowering& el, const std::vector<mlir::Value>& in,
                                  runtime::DotPlan plan) {
  auto call = std::make_unique<DotCall>(std::move(plan), el.eqn);
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
