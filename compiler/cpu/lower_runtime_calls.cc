// Lowering runtime calls (compiler/cpu/runtime_calls.h): a BLAS dot, or an eqn the interpreter's
// kernel runs.
#include <fmt/format.h>
#include <mlir/IR/Builders.h>

#include "compiler/cpu/lowering.h"
#include "compiler/cpu/runtime_symbols.h"
#include "ir/errors.h"
#include "runtime/blas_dot.h"
#include "runtime/interpreter.h"

namespace cjax::lower {

std::vector<mlir::Value> blas_dot(EqnLowering& el, const std::vector<mlir::Value>& in,
                                  runtime::DotPlan plan) {
  auto call = make_dot_call(std::move(plan), el.eqn);
  return emit_runtime_call(el, std::move(call), in, {el.eqn.outputs[0].aval()});
}

std::vector<mlir::Value> kernel_fallback(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                                         const std::string& why) {
  if (!runtime::has_kernel(el.eqn.prim->name))
    throw UnsupportedError(unsupported_message(
        el, fmt::format("{}, and the interpreter has no kernel for it either", why)));
  auto call = make_kernel_call(el.eqn);
  return emit_runtime_call(el, std::move(call), inputs,
                           avals_of(std::span<const Var>(el.eqn.outputs)));
}

}  // namespace cjax::lower
