#include "passes/pipeline.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>
#include <utility>

#include "ir/call_body.h"
#include "ir/errors.h"
#include "ir/print/printer.h"
#include "ir/sub_jaxprs.h"
#include "passes/batched_while.h"
#include "passes/cotangent_sums.h"
#include "passes/dce.h"
#include "passes/fold_transposes.h"
#include "passes/inline.h"
#include "passes/positional_collectives.h"
#include "passes/recompute_residuals.h"
#include "passes/rematerialize.h"
#include "passes/repeated_calls.h"
#include "passes/scan_residuals.h"
#include "passes/vjp.h"

namespace cjax {
namespace {

bool dumping() {
  const char* v = std::getenv("CJAX_DUMP_PASSES");
  return v && *v && std::string_view(v) != "0";
}

void dump(std::string_view step, const Jaxpr& jaxpr) {
  if (dumping())
    std::cerr << "-- cjax pipeline: after " << step << "\n" << to_string(jaxpr) << "\n";
}

// Top-level jit calls are inlined when there are some and every one can be (a body with consts
// cannot), so that a back end cutting the program into segments cuts through them.
bool inline_top_level_calls(const Jaxpr& jaxpr) {
  bool any = false;
  for (const Eqn& e : jaxpr.eqns) {
    if (e.prim->name != "jit") continue;
    any = true;
    const Jaxpr* body = call_body(e);
    if (!body || !body->constvars.empty()) return false;
  }
  return any;
}

bool has_remat(const Jaxpr& jaxpr) {
  for (const Eqn& e : jaxpr.eqns)
    if (e.prim->name == "remat2") return true;
  return false;
}

}  // namespace

TrainingStep training_step(const Jaxpr& f, const StepOptions& options) {
  VjpResult vjp = vjp_jaxpr(f, options.out_differentiated);
  TrainingStep step{std::move(vjp.fwd), std::move(vjp.bwd), vjp.num_residuals, 0};
  dump("vjp (forward)", step.fwd);
  dump("vjp (backward)", step.bwd);
  if (!options.wrt.empty()) {
    if (options.wrt.size() != step.bwd.outvars.size())
      throw Error(fmt::format("training_step: {} gradient flags for {} gradients",
                              options.wrt.size(), step.bwd.outvars.size()));
    step.bwd = dce(step.bwd, options.wrt).jaxpr;  // gradients nobody asked for are not computed
    dump("dce of the gradients not asked for", step.bwd);
  }
  if (options.sum_cotangents_in_order) {
    step.bwd = sum_cotangents_in_order(step.bwd);
    dump("cotangents summed in step order", step.bwd);
  }
  if (options.recompute_cheap_residuals) {
    ResidualSplit s = recompute_cheap_residuals(step.fwd, step.bwd, step.num_residuals);
    step = {std::move(s.fwd), std::move(s.bwd), s.num_residuals, s.recomputed};
    dump("residual recomputation (forward)", step.fwd);
    dump("residual recomputation (backward)", step.bwd);
  }
  return step;
}

namespace {

// custom_lin (a custom_vjp function's tangent map) has no evaluation, only a transpose: a program
// still holding one differentiates a custom_vjp function in forward mode (JAX's error).
void refuse_custom_lin(const Jaxpr& j) {
  for (const Eqn& e : j.eqns) {
    if (e.prim->name == "custom_lin")
      throw UnsupportedError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
    for (const Jaxpr* body : sub_jaxprs(e)) refuse_custom_lin(*body);
  }
}

}  // namespace

Jaxpr prepare_for_lowering(const Jaxpr& program, const PrepareOptions& options) {
  refuse_custom_lin(program);
  const bool inlined = inline_top_level_calls(program);
  Jaxpr j = program;
  if (inlined) {
    j = inline_calls(j);
    dump("inline calls", j);
  }
  if (inlined || has_remat(j)) {  // inlined bodies may hold remat2 too
    std::optional<RepeatedCalls> repeated;
    if (options.keep_repeated_calls) repeated.emplace(j);
    j = expand_remat(j, repeated ? &*repeated : nullptr);
    dump("expand remat", j);
  }
  j = drop_forwarding_eqns(j, options.keep_memory_transfers);
  dump("drop forwarding eqns", j);
  j = unbatch_while_predicates(j);
  dump("unbatch while predicates", j);
  j = reduce_positional_collectives(j);
  dump("reduce positional collectives", j);
  j = fold_transposed_dots(j);
  dump("fold transposed dots", j);
  j = rematerialize_cheap_values(j, {.keep_repeated_calls = options.keep_repeated_calls});
  dump("rematerialize cheap values", j);
  j = recompute_scan_residuals(j);
  dump("recompute scan residuals", j);
  return j;
}

}  // namespace cjax
