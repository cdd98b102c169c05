// A primitive's declaration in the IR: its name, shape rule, how its params print, and its traits.
// The layers above keep the rest of its rules in tables indexed by the primitive itself
// (ir/rules/per_primitive.h): the transformation rules in passes/ (passes/primitive_rules.h), the
// kernels in runtime/, the lowerings in compiler/. The built-in table is in ir/rules/.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// Output avals from input avals and params. Throws cjax::TypeError with a message that names the
// primitive and the offending shapes/dtypes; callers add the source location.
using ShapeRule =
    std::function<std::vector<ShapedArray>(std::span<const ShapedArray> in, const Params& params)>;

struct ParamRef {
  std::string_view key;
  const ParamValue* value;
};
// Which params print, in which order. Default (empty function): all, sorted by key.
using ParamPrintRule = std::function<std::vector<ParamRef>(const Params& params)>;

// Brings params read from text of an older JAX era to the current schema (adds defaults such as
// `out_sharding=None`, drops retired ones such as cond's `linear`, renames `call_jaxpr`).
using ParamCanonicalizer = std::function<void(Params& params)>;

// What an eqn of the primitive costs in floating-point operations, as the memory planner and its
// report count them (passes/memory/flops.h).
enum class FlopCount {
  per_output_element,  // elementwise arithmetic, comparisons, conversions: the default
  per_input_element,   // reductions and scans along an axis: one operation per element read
  none,                // moves or relabels data (reshape, slicing, copies, names)
  rule,                // Primitive::flop_rule: contractions, loops, branches
};
// The FLOPs of a primitive whose count is a rule, given how to count a jaxpr it holds.
using FlopRule =
    std::function<double(const Eqn& eqn, const std::function<double(const Jaxpr&)>& body_flops)>;

struct Primitive {
  static constexpr unsigned kNotBuiltin = ~0u;

  std::string name;
  // Position in the built-in table (0, 1, ...); kNotBuiltin for opaque primitives. Layers above
  // ir/ keep their per-primitive rules in arrays indexed by it (ir/rules/per_primitive.h).
  unsigned index = kNotBuiltin;
  ShapeRule shape_rule;  // empty for opaque primitives
  ParamPrintRule print_params;
  ParamCanonicalizer canonicalize_params;
  // An opaque primitive was met in parsed text and is unknown to cjax: it is typed only by its
  // binders and its params are kept verbatim, printed in the order they were read.
  bool opaque = false;
  // Higher-order primitives hold jaxprs in params (remat2, jit, scan, cond, while, ...).
  bool higher_order = false;
  // Call-like primitives apply the jaxpr held in this param to their operands, one to one, and
  // return its outputs (jit's "jaxpr", custom_jvp_call's "call_jaxpr"); empty for the others.
  // Passes and back ends that see through calls find them by this trait (ir/call_body.h).
  std::string call_body;
  // Elementwise arithmetic: each output element depends only on the operands' elements at the
  // same index (scalar operands broadcast). Such eqns fuse into one loop and are cheap to
  // recompute (passes/recompute_residuals.h).
  bool elementwise = false;
  // Elementwise and computed by a polynomial or a libm call (exp, tanh, sin, erf, pow, ...) rather
  // than an instruction or two: not worth recomputing to save memory traffic.
  bool transcendental = false;
  // Its cost in FLOPs (a call's is its body's, whatever this says).
  FlopCount flop_count = FlopCount::per_output_element;
  FlopRule flop_rule;  // for FlopCount::rule
};

// Params sorted by key: the default print rule.
std::vector<ParamRef> sorted_params(const Params& params);

}  // namespace cjax
