// The JSON form of jaxprs (documented in docs/jaxpr-json.md), so other tools can read and write
// cjax's programs. The JSON is a lossless image of the IR: reading back what jaxpr_to_json wrote
// gives a jaxpr that prints (ir/print) byte for byte like the original, with the same source
// locations (relative to the checkout, as reports print them), debug names and constant values.
// Remat policies are functions: only their printed form is kept, and a policy read back prints
// and writes the same but throws UnsupportedError when asked to decide.
#pragma once

#include <string>
#include <string_view>

#include "ir/jaxpr.h"

namespace cjax {

// `indent` < 0 writes one line.
std::string jaxpr_to_json(const Jaxpr& jaxpr, int indent = 2);

// Reads and verifies the structure (every variable defined once before use, known dtypes, sane
// shapes, consts of the right size). Malformed JSON throws cjax::ParseError with line and column;
// a well-formed document that is not a valid jaxpr throws cjax::Error naming the JSON path
// (`jaxprs[0].eqns[3].inputs[1]`). The result has not been through ir/rules' verify().
JaxprRef jaxpr_from_json(std::string_view text);

// Whether `text` looks like the JSON form rather than jaxpr text (both start with '{').
bool looks_like_jaxpr_json(std::string_view text);

}  // namespace cjax
