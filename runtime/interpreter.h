// The reference interpreter: evaluates any jaxpr of built-in primitives on the CPU, one kernel per
// primitive (runtime/kernels/). Eager ops on concrete Arrays run through apply_primitive.
#pragma once

#include <span>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"
#include "runtime/buffer.h"

namespace cjax::runtime {

// Evaluates `jaxpr` with its attached consts (or `consts` when given) on `args`. Throws
// cjax::TypeError when an argument's aval differs from its invar's, and cjax::UnsupportedError
// naming the primitive and "interpreter" for a primitive without a kernel (e.g. an opaque one).
std::vector<Buffer> eval_jaxpr(const Jaxpr& jaxpr, std::span<const Buffer> args);
std::vector<Buffer> eval_jaxpr(const Jaxpr& jaxpr, std::span<const Buffer> consts,
                               std::span<const Buffer> args);

// Runs one primitive's kernel. `out_avals` are the avals the shape rule gave.
std::vector<Buffer> apply_primitive(const Primitive& prim, const Params& params,
                                    std::span<const Buffer> inputs,
                                    std::span<const ShapedArray> out_avals);
// The same, written into `outs` (the caller's buffers of the output types, which alias no input):
// a kernel that writes into given outputs writes there directly (a collective receives into
// them), others' results are copied there. Compiled code's runtime calls use it.
void apply_primitive_into(const Primitive& prim, const Params& params,
                          std::span<const Buffer> inputs, std::span<Buffer> outs);

// The kernel table. A kernel writes into pre-allocated outputs.
using Kernel = void (*)(const Params& params, std::span<const Buffer> inputs,
                        std::span<Buffer> outputs);
void register_kernel(std::string_view prim_name, Kernel k);
bool has_kernel(std::string_view prim_name);

}  // namespace cjax::runtime
