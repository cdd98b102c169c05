// Runtime calls: eqns whose compiled form is a call back into C++ from the compiled code. A dot
// goes to OpenBLAS through a plan made at compile time; any primitive the lowering rules do not
// compile natively (integer division, cumulative ops, control flow, ...) runs the interpreter's
// kernel on the compiled code's buffers. No MLIR here: a program loaded from the persistent
// compilation cache rebuilds its calls from their text without lowering anything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/blas_dot.h"

namespace cjax::lower {

// Something compiled code calls back into (a BLAS dot, an interpreter kernel), given the data
// pointers of its inputs then outputs. The executable owns these for as long as its code lives.
class RuntimeCall {
 public:
  virtual ~RuntimeCall() = default;
  // What compiled code passes: for each input its data address then its strides (in elements, one
  // per dim), for each output its address. An input whose strides are not row-major (a view
  // across a larger buffer) is copied into row-major order first; one that is (a contiguous part
  // of a scan's stacked array, at any offset) is read where it is. Then `run`. (The GPU back
  // end's programs call `run` themselves, with row-major buffers.)
  void invoke(const intptr_t* words) const;
  // Row-major inputs, then outputs.
  virtual void run(void* const* pointers) const = 0;
  virtual const std::vector<ShapedArray>& input_avals() const = 0;
  virtual size_t num_outputs() const = 0;
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
