// The limits on what cjax reads and traces, shared by every reader (jaxpr text, JSON, .npy,
// plugins) and by the shape rules, so that each limit has one value and one message
// (docs/errors.md, "Limits"). Hostile input beyond them is rejected with a cjax::Error subclass
// instead of exhausting the stack, hanging the compiler or overflowing a size.
#pragma once

#include <cstdint>
#include <string>

#include "ir/jaxpr.h"
#include "ir/shaped_array.h"

namespace cjax {

// Levels of nesting: a jaxpr is one level, each jaxpr in its params (jit, scan, cond, ...) and
// each tuple or list of param values one more. Printing, verifying, the passes and the back end
// recurse on it; real programs nest a few levels.
inline constexpr int kMaxNesting = 100;

// Dimensions of an array: NumPy 2's limit. Compiled code nests one loop per dimension, and the
// MLIR pipeline's time grows quickly with the rank (docs/errors.md has the measurements).
inline constexpr int64_t kMaxRank = 64;

// Equations of a program once every nested jaxpr is counted at each of its uses. A jaxpr may be
// shared (a `let` preamble, a JSON jaxpr index), so a small text can describe a program whose
// passes, which transform each use, would run for ever: each level calling the next twice
// doubles the work. Real programs stay far below it.
inline constexpr int64_t kMaxExpandedEqns = 1'000'000;

// "nesting deeper than 100 levels is not supported"
std::string nesting_limit_message();

// The equations of `jaxpr` with each nested jaxpr's counted at each use (as passes see them),
// counting stopped past kMaxExpandedEqns; each shared jaxpr is walked once. Recurses as deep as
// the jaxprs nest (readers bound that first).
int64_t expanded_eqn_count(const Jaxpr& jaxpr);
// "the program expands to more than 1000000 equations (a nested jaxpr counts at each use)"
std::string expansion_limit_message();

// Why an array of `dtype` and `shape` is beyond the limits, or "" when it is not: more than
// kMaxRank dimensions, a negative dimension, or an element count or byte size that int64 cannot
// hold (the product of the non-zero dimensions, which strides are computed from). Only sizes that
// overflow are refused: a huge but representable array is a valid type.
std::string shape_limit_error(DType dtype, const Shape& shape);

}  // namespace cjax
