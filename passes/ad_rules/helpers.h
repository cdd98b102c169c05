// Shorthands for declaring autodiff rules the way JAX's ad.py does (defjvp, defjvp2, deflinear,
// defjvp_zero), so each rule reads like its JAX counterpart; and a way to differentiate a
// primitive application inside a rule (JAX rules that call `api.jvp` on a traced function).
// The rules emit their ops with the lax library (passes/lax/lax.h) into the JaxprBuilder.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "ir/errors.h"
#include "passes/jvp.h"
#include "passes/lax/lax.h"
#include "passes/transpose.h"

namespace cjax::ad {

// One term of a defjvp rule: the contribution of input i's tangent `g`, given the primals.
using JvpTerm = std::function<Atom(JaxprBuilder& b, const Atom& g, std::span<const Atom> primals,
                                   const Eqn& eqn)>;
// A defjvp2 term also sees the primal output `ans`.
using JvpTerm2 = std::function<Atom(JaxprBuilder& b, const Atom& g, const Atom& ans,
                                    std::span<const Atom> primals, const Eqn& eqn)>;

// JAX's standard_jvp: every nonzero input tangent's term, in input order, then their sum with
// add_any (left to right). Null terms mark non-differentiable inputs.
void defjvp(std::string_view prim, std::vector<JvpTerm> terms);
void defjvp2(std::string_view prim, std::vector<JvpTerm2> terms);
// Non-differentiable in the JAX sense: every output tangent is a symbolic zero.
void defjvp_zero(std::string_view prim);
// JAX's linear_jvp: the primitive applied to the tangents (zeros instantiated), with the eqn's
// params; `transpose` is its transpose rule.
void deflinear(std::string_view prim, TransposeRule transpose);
// JAX's instantiate_zeros of a symbolic zero tangent: zeros of the primal's aval. A scalar one is
// a constant array (Literal::array_constant), which partial evaluation makes a residual.
Atom instantiate_zeros(JaxprBuilder& b, const Atom& primal);

// JAX's _unbroadcast: sums `x` down to `aval`'s shape, undoing rank-0 or size-1 broadcasting.
Atom unbroadcast(JaxprBuilder& b, const ShapedArray& aval, const Atom& x);
// JAX's _maybe_broadcast: broadcasts `x` (rank 0 or with size-1 dims) to `shape`.
Atom maybe_broadcast(JaxprBuilder& b, const Shape& shape, const Atom& x);

// JAX's broadcast_shapes of two operand shapes (rank 0 or size-1 dims broadcast).
Shape broadcast_shapes(const Shape& x, const Shape& y);

// The eqn's `accuracy` param (None when absent) and whether it asks for AccuracyMode.HIGHEST.
ParamValue accuracy_of(const Eqn& eqn);
bool accuracy_is_highest(const Eqn& eqn);

// "<what> (from <source>)": the message of an UnsupportedError raised by a rule.
[[noreturn]] void unsupported(std::string_view what, const Eqn& eqn);

// A primal value with its tangent (nullopt: symbolic zero), as a JAX JVPTracer holds them.
struct Dual {
  Atom primal;
  Tangent tangent;
};
// Applies `prim` to duals the way JAX's JVPTrace does: the primal eqn, then (when some tangent
// is nonzero) the primitive's jvp rule, all emitted into `b`.
std::vector<Dual> jvp_bind(JaxprBuilder& b, std::string_view prim, const std::vector<Dual>& in,
                           Params params = {});
Dual jvp_bind1(JaxprBuilder& b, std::string_view prim, const std::vector<Dual>& in,
               Params params = {});

}  // namespace cjax::ad
