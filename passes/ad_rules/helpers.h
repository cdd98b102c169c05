// Shorthands for declaring autodiff rules the way JAX's ad.py does (defjvp, defjvp2, deflinear,
// defbilinear), so each rule below reads like its JAX counterpart.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "ir/errors.h"
#include "passes/jvp.h"
#include "passes/lax.h"
#include "passes/transpose.h"

namespace cjax::ad {

// One term of a defjvp rule: the contribution of input i's tangent `g`, given the primals.
using JvpTerm = std::function<Atom(JaxprBuilder& b, const Atom& g, std::span<const Atom> primals,
                                   const Eqn& eqn)>;
// A defjvp2 term also sees the primal output `ans`.
using JvpTerm2 = std::function<Atom(JaxprBuilder& b, const Atom& g, const Atom& ans,
                                    std::span<const Atom> primals, const Eqn& eqn)>;

// Tangent out = sum over nonzero input tangents of term_i, accumulated with add_any left to right.
void defjvp(std::string_view prim, std::vector<JvpTerm> terms);
void defjvp2(std::string_view prim, std::vector<JvpTerm2> terms);
// Non-differentiable in the JAX sense: the output tangent is a symbolic zero.
void defjvp_zero(std::string_view prim);
// A primitive linear in all its inputs: the tangent is the primitive applied to the tangents
// (zeros instantiated); `transpose` gives its transpose rule.
void deflinear(std::string_view prim, TransposeRule transpose);

// Sums `x` down to `aval`'s shape, undoing implicit size-1 or rank-0 broadcasting.
Atom unbroadcast(JaxprBuilder& b, const ShapedArray& aval, const Atom& x);
// Broadcasts `x` to `shape` when it is rank-0 or has size-1 dims (JAX's _maybe_broadcast).
Atom maybe_broadcast(JaxprBuilder& b, const Shape& shape, const Atom& x);

}  // namespace cjax::ad
