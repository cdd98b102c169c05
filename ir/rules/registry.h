// The table of built-in primitives (name, shape rule, param print rule), and the interning of
// opaque primitives met in parsed text.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "ir/primitive.h"

namespace cjax {

// nullptr when `name` is not a built-in primitive.
const Primitive* find_primitive(std::string_view name);
// Throws cjax::UnsupportedError naming the primitive when it is not built in.
const Primitive& get_primitive(std::string_view name);
// The interned opaque primitive called `name` (the same object for the same name).
const Primitive& opaque_primitive(std::string_view name);
std::vector<std::string_view> builtin_primitive_names();
// The number of built-in primitives: their Primitive::index runs from 0 below it.
size_t builtin_primitive_count();

// Runs prim's shape rule. Throws cjax::TypeError: "<prim>: <what is wrong> (got f32[3], f32[4])";
// callers prepend the source location. Throws cjax::UnsupportedError for opaque primitives.
std::vector<ShapedArray> infer_avals(const Primitive& prim, std::span<const ShapedArray> in,
                                     const Params& params);

}  // namespace cjax
