// cjax::bind: the one entry point of every op. It computes the output avals with the primitive's
// shape rule (a cjax::TypeError gets the caller's location prepended:
// `examples/tutorial.cc:12:10: dot_general: ...`), then, while a trace is active, stages an
// equation (with `src`) into the innermost trace and returns its tracers; otherwise it runs the
// primitive eagerly with the reference interpreter and returns concrete Arrays.
//
// Staging follows JAX's DynamicJaxprTrace: a convert_element_type to the operand's own type and a
// broadcast_in_dim to the operand's own shape are forwarded (no equation), and a
// convert_element_type of a C++ number is folded into a new constant.
#pragma once

#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cjax/array.h"
#include "ir/params.h"
#include "ir/primitive.h"
#include "ir/source_info.h"

namespace cjax {

std::vector<Array> bind(const Primitive& prim, std::span<const Array> inputs, Params params,
                        SourceInfo src);
std::vector<Array> bind(std::string_view prim_name, std::span<const Array> inputs, Params params,
                        SourceInfo src);
// For single-output primitives.
Array bind1(std::string_view prim_name, std::span<const Array> inputs, Params params,
            SourceInfo src);
Array bind1(std::string_view prim_name, std::initializer_list<Array> inputs, Params params,
            SourceInfo src);

// "examples/tutorial.cc:12:10: " (empty when the location is unknown).
std::string location_prefix(const SourceInfo& src);
// Throws cjax::TypeError("<location>: <what>").
[[noreturn]] void throw_type_error(const SourceInfo& src, std::string_view what);

}  // namespace cjax
