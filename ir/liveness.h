// Where each variable of a jaxpr is read for the last time: what the interpreter, the memory
// model and the back end's segmenting free buffers by.
#pragma once

#include <cstddef>
#include <limits>
#include <unordered_map>

#include "ir/jaxpr.h"

namespace cjax {

// The jaxpr returns the variable: it is live to the end.
inline constexpr size_t kReadByOutputs = std::numeric_limits<size_t>::max();

// For every variable an eqn or the outputs read (by Var::id()): the index of the last eqn that
// reads it, or kReadByOutputs. Variables nothing reads are absent.
std::unordered_map<const void*, size_t> last_reads(const Jaxpr& jaxpr);

}  // namespace cjax
