// The transformation rules of a primitive, kept together in one record per primitive: its jvp,
// its transpose, its partial-eval rules, its dce and its batching rule. Each family file under
// passes/ad_rules/ (and remat.cc, jit_rules.cc, control_flow/) fills in the records of its
// primitives; the passes read them from the eqn's primitive. A primitive's shape rule, params and
// traits are in ir/rules/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/batching.h"
#include "passes/jvp.h"
#include "passes/partial_eval.h"
#include "passes/remat.h"
#include "passes/transpose.h"

namespace cjax {

// Dead-code elimination of one eqn whose outputs are used as marked (at least one is): the eqn
// that computes just those outputs, or nullopt when the eqn stays as it is. Primitives without a
// rule are kept whole.
using DceRule =
    std::function<std::optional<Eqn>(const Eqn& eqn, const std::vector<bool>& used_outputs)>;

struct PassRules {
  JvpRule jvp;
  JvpFullRule jvp_full;  // higher-order primitives: emits the primal part too; preferred over jvp
  TransposeRule transpose;
  // Higher-order primitives whose eqn splits into a known and a staged eqn (jit, remat2, scan,
  // cond, while); the others go wholly to one side.
  PartialEvalRule partial_eval;
  PartialEvalCustomRule partial_eval_custom;  // the same under a remat policy
  DceRule dce;
  BatchRule batch;  // vmap (passes/batching.h)
  // Collectives: the axis names an eqn's params name. batch_jaxpr calls `batch` for an eqn that
  // names the vmap's axis even when no operand is batched (JAX's skippable_batchers).
  std::function<std::vector<std::string>(const Params&)> batch_axis_names;
};

// The rules of `prim`: all empty for primitives with none (opaque ones included).
const PassRules& pass_rules(const Primitive& prim);

// Whether partial_eval_jaxpr_custom splits an eqn of `prim` by splitting its body under the same
// policy (call_partial_eval_custom: jit and remat2), so that the call itself is transparent to a
// policy's decisions.
bool splits_body_under_policy(const Primitive& prim);

// The record of the built-in primitive `name`, for its family file to fill in while
// ensure_pass_rules() runs (passes/rules.h).
PassRules& define_pass_rules(std::string_view name);

}  // namespace cjax
