// The properties every random program must have. Each check returns an empty string when the
// property holds, else what went wrong (a pass throwing counts as a failure too).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/property/random_program.h"

namespace prop {

struct Property {
  const char* name;
  std::function<std::string(const cjax::Jaxpr&, uint64_t seed)> check;
};

// jvp_fd: jvp's tangents against central finite differences (f64), and its primal outputs
//   against evaluating the program.
// vjp_jvp: <vjp(ct), t> = <ct, jvp(t)>, and linearize's linear program gives jvp's tangents.
// policies: the gradient of checkpoint(f, policy) equals the plain gradient, for every policy.
// roundtrip: print -> parse -> print is the identity, for the program and every pass's output.
// verify: the verifier accepts every pass's output (jvp, linearize, vjp, checkpoint, dce, cse),
//   and dce/cse keep the values.
// compiled: the program, and its backward program under a policy, compiled through MLIR give the
//   interpreter's values (every fifth seed: compiling is the slow part).
// recompute: the vjp pair with cheap residuals recomputed (the pair compiled code runs) passes
//   the verifier, keeps no more residuals, and gives the same outputs and gradient.
// budget_floor: memory_budget reaches every built-in policy's peak (the low end of its curve is
//   at most each of theirs, and a budget at the smallest of theirs is met).
// vmap: the program batched (random batch axes, unbatched inputs too) equals a loop of it over
//   the examples, interpreted and (every seventh seed) compiled.
const std::vector<Property>& properties();

// Runs `check` on the traced program; a throw while tracing or checking is a failure.
std::string check_program(const Property& prop, const Program& p);

// Shrinks a failing program: repeatedly takes the first one-step-smaller program that still
// fails the property, up to `budget` checks.
Program shrink(const Property& prop, Program p, int budget = 400);

}  // namespace prop
