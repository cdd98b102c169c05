// Runtime calls: eqns whose compiled form is a call back into C++ from the compiled code. A dot
// goes to OpenBLAS through a plan made at compile time; any primitive the lowering rules do not
// compile natively (integer division, cumulative ops, control flow, ...) runs the interpreter's
// kernel on the compiled code's buffers. No MLIR here: a program loaded from the persistent
// compilation cache rebuilds its calls from their text without lowering anything.
#pragma once

#include <memory>
#include <string>

#include "ir/jaxpr.h"
#include "runtime/blas_dot.h"

namespace cjax::lower {

// Something compiled code calls back into (a BLAS dot, an interpreter kernel), given the data
// pointers of its inputs then outputs. The executable owns these for as long as its code lives.
class RuntimeCall {
 public:
  virtual ~RuntimeCall() = default;
  virtual void run(void* const* pointers) const = 0;
  virtual std::string describe() const = 0;
  // The eqn the call runs, as a one-eqn jaxpr's text (one input per pointer the call reads, then
  // its outputs): what the GPU back end's programs and the compilation cache's entries carry to
  // rebuild the call elsewhere (runtime_call_from_text).
  virtual std::string jaxpr_text() const = 0;
};

// `e` as a product OpenBLAS computes by `plan`.
std::unique_ptr<RuntimeCall> make_dot_call(runtime::DotPlan plan, const Eqn& e);
// `e` run by the interpreter's kernel.
std::unique_ptr<RuntimeCall> make_kernel_call(const Eqn& e);

// The call a RuntimeCall::jaxpr_text stands for, as the lowering made it: a dot_general of
// operands OpenBLAS takes becomes a BLAS call, anything else a kernel call. Throws cjax::Error
// when the text is not one eqn, or names an eqn the interpreter has no kernel for.
std::unique_ptr<RuntimeCall> runtime_call_from_text(std::string_view jaxpr_text);

}  // namespace cjax::lower
