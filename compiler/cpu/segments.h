// Splitting a long program into segments that the back end compiles as separate functions. LLVM's
// optimizer and code generator take superlinear time in the size of one function, so a deep
// network's thousands of eqns compiled as one `main` take minutes; cut into segments, the repeated
// layers are the same function and compile once, and the compile time grows with the number of
// distinct segments, not with depth. A host-side plan then calls the segments in order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax::lower {

// Eqns [begin, end) of the program they were cut from, with what they read from before and what
// later eqns (or the program's outputs) read from them.
struct Segment {
  size_t begin = 0, end = 0;
  std::vector<Var> inputs;        // in the order first read
  std::vector<Var> outputs;       // in the order defined
  std::vector<Literal> literals;  // outputs that are literals (a segment of no eqns holds them)
};

// Cuts `jaxpr`'s eqns, in order, into segments: one starts between every two eqns for which
// `cuts_between(previous, next)` holds (at the runtime calls, so that a layer's dot and the
// elementwise work after it form one segment) and after every `max_eqns` eqns. Constvars count
// as inputs like invars. The program's literal outputs come out of one last segment without eqns.
std::vector<Segment> split_into_segments(
    const Jaxpr& jaxpr, size_t max_eqns,
    const std::function<bool(const Eqn& previous, const Eqn& next)>& cuts_between);

// The segment as a closed program over fresh variables: invars for its inputs, outvars for its
// outputs then its literals.
Jaxpr segment_program(const Jaxpr& jaxpr, const Segment& s);

// A key under which equal segments share one compiled function: the segment program's exact
// text (ir/exact_text.h), written without building the program, or a key of its own when an eqn
// carries values that text cannot pin down (a nested jaxpr's consts, a policy, an opaque
// parameter), so two such segments are never taken for each other. `index` is the segment's
// position.
std::string segment_key(const Jaxpr& jaxpr, const Segment& s, size_t index);

// The number of eqns in `jaxpr`, counting those of nested jaxprs (call bodies, loop bodies).
size_t count_eqns(const Jaxpr& jaxpr);

}  // namespace cjax::lower
