// Replays a jaxpr through cjax::bind: eagerly when no trace is active (an evaluation), or into the
// innermost trace (an inlining). Transformations use it to run and inline the jaxprs they build.
#pragma once

#include <span>
#include <vector>

#include "cjax/array.h"
#include "cjax/trace.h"
#include "ir/jaxpr.h"

namespace cjax {

// `consts` are the constvars' values; when empty, the jaxpr's attached consts are used.
// Throws cjax::TypeError when the number or types of the arguments do not match.
std::vector<Array> eval_jaxpr(const Jaxpr& jaxpr, std::span<const Array> consts,
                              std::span<const Array> args);
std::vector<Array> eval_jaxpr(const ClosedTrace& closed, std::span<const Array> args);

// The Array for a literal operand (a concrete scalar of the literal's type).
Array literal_value(const Literal& l);

}  // namespace cjax
