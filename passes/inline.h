// Inlining: copying a jaxpr's eqns into another under construction, with fresh variables, and
// the `inline` pass that replaces jit calls by their bodies.
#pragma once

#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/builder.h"

namespace cjax {

// Emits `callee`'s eqns into `b` with its constvars bound to `consts` and invars to `args`;
// every variable it defines is renamed to a fresh one, so the same jaxpr can be inlined twice.
// Returns the atoms of callee's outvars.
std::vector<Atom> inline_jaxpr(JaxprBuilder& b, const Jaxpr& callee, std::span<const Atom> consts,
                               std::span<const Atom> args);

// What `a` stands for under a renaming of variables (a literal, or a variable `env` does not
// map, stands for itself).
Atom read_env(const std::unordered_map<Var, Atom, VarHash>& env, const Atom& a);

// Replaces every `jit` eqn (recursively) by its body.
Jaxpr inline_calls(const Jaxpr& jaxpr);

class RepeatedCalls;

// Replaces every `remat2` eqn (recursively) by its body, as lowering does. The recomputation in
// a backward program (differentiated=True, prevent_cse=True) first passes its inputs through one
// `optimization_barrier`, so no later cse can merge it with the forward computation it repeats.
// The calls `keep` names (made from `jaxpr`) stay calls, of bodies expanded once and shared.
Jaxpr expand_remat(const Jaxpr& jaxpr, RepeatedCalls* keep = nullptr);

// name, optimization_barrier, device_put and stop_gradient: their outputs are their operands.
bool forwards_operands(std::string_view prim);
// `jaxpr` (top level) without those eqns, their outputs read as their operands. For the compiled
// back end: no cse runs there, so a barrier has nothing to guard, and a value passed through one
// between two compiled segments would otherwise be copied. With `keep_memory_transfers`, a
// device_put to pinned host or device memory (an offload policy's) stays: the GPU back end moves
// the data.
Jaxpr drop_forwarding_eqns(const Jaxpr& jaxpr, bool keep_memory_transfers = false);

}  // namespace cjax
