#include "compiler/cpu/runtime_calls.h"

#include <fmt/format.h>

#include <cstring>

#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "ir/primitive.h"
#include "ir/print/printer.h"
#include "runtime/allocator.h"
#include "runtime/interpreter.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/strided_copy.h"

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
  const std::vector<ShapedArray>& input_avals() const override { return eqn_.in_avals; }
  size_t num_outputs() const override { return eqn_.out_avals.size(); }
  std::string describe() const override {
    // The gemm as BLAS runs it: op(A)[m,k] @ op(B)[k,n], each operand read transposed ("^T"),
    // in place from a strided view ("strided") or first packed into the gemm layout ("packed"),
    // times the batch.
    auto operand = [](const runtime::DotOperand& o) {
      return fmt::format("{}{}", o.transposed ? "^T" : "",
                         !o.perm.empty() ? " packed"
                         : o.dense       ? ""
                                         : " strided");
    };
    return fmt::format("dot_general via BLAS: {} x [{}x{}]{} @ [{}x{}]{}", plan_.batch, plan_.m,
                       plan_.k, operand(plan_.lhs), plan_.k, plan_.n, operand(plan_.rhs));
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
    // The kernel writes into the compiled code's own output buffers (a collective receives
    // there).
    std::vector<runtime::Buffer> outs;
    for (size_t i = 0; i < eqn_.out_avals.size(); ++i)
      outs.push_back(runtime::Buffer::borrow(eqn_.out_avals[i], p[ins.size() + i]));
    runtime::apply_primitive_into(*eqn_.prim, eqn_.params, ins, outs);
  }
  const std::vector<ShapedArray>& input_avals() const override { return eqn_.in_avals; }
  size_t num_outputs() const override { return eqn_.out_avals.size(); }
  std::string describe() const override {
    return fmt::format("{} via the interpreter's kernel", eqn_.prim->name);
  }
  std::string jaxpr_text() const override { return eqn_.jaxpr_text(); }

 private:
  EqnSignature eqn_;
};

}  // namespace

void RuntimeCall::invoke(const intptr_t* words) const {
  const std::vector<ShapedArray>& ins = input_avals();
  std::vector<void*> pointers;
  pointers.reserve(ins.size() + num_outputs());
  std::vector<void*> scratch;  // row-major copies, freed after the call
  struct Free {
    std::vector<void*>& blocks;
    ~Free() {
      for (void* b : blocks) runtime::tracked_free(b);
    }
  } free_scratch{scratch};
  std::vector<int64_t> strides;
  for (const ShapedArray& a : ins) {
    void* data = reinterpret_cast<void*>(*words++);
    const std::vector<int64_t> row_major = runtime::row_major_strides(a.shape);
    strides.assign(words, words + a.shape.size());
    words += a.shape.size();
    bool in_order = true;
    for (size_t d = 0; d < a.shape.size(); ++d)
      in_order = in_order && (a.shape[d] == 1 || strides[d] == row_major[d]);
    if (!in_order && a.size() > 0) {
      void* copy = runtime::tracked_malloc(a.nbytes());
      scratch.push_back(copy);
      runtime::strided_copy(ShapedArray(a.dtype, {}).nbytes(), a.shape, data, strides, copy,
                            row_major);
      data = copy;
    }
    pointers.push_back(data);
  }
  for (size_t i = 0; i < num_outputs(); ++i) pointers.push_back(reinterpret_cast<void*>(*words++));
  run(pointers.data());
}

std::unique_ptr<RuntimeCall> make_dot_call(runtime::DotPlan plan, const Eqn& e) {
  return std::make_unique<DotCall>(std::move(plan), e);
}

std::unique_ptr<RuntimeCall> make_kernel_call(const Eqn& e) {
  return std::make_unique<KernelCall>(e);
}

std::unique_ptr<RuntimeCall> runtime_call_from_text(std::string_view jaxpr_text) {
  JaxprRef j = parse_jaxpr(jaxpr_text);
  if (j->eqns.size() != 1)
    throw Error(fmt::format("a runtime call holds {} eqns, not one", j->eqns.size()));
  const Eqn& e = j->eqns[0];
  if (e.prim->name == "dot_general" && e.inputs.size() == 2 && e.outputs.size() == 1) {
    const ShapedArray& lhs = e.inputs[0].aval();
    const ShapedArray& rhs = e.inputs[1].aval();
    const ShapedArray& out = e.outputs[0].aval();
    if (runtime::blas_dot_supported(lhs, rhs, out))
      return make_dot_call(
          runtime::plan_dot(lhs, rhs,
                            DotDimensionNumbers::from_param(e.params.at("dimension_numbers")), out),
          e);
  }
  if (!runtime::has_kernel(e.prim->name))
    throw Error(fmt::format("a runtime call runs {}, which the interpreter has no kernel for",
                            e.prim->name));
  return make_kernel_call(e);
}

}  // namespace cjax::lower
