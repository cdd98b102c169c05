// Argument promotion shared by the cjax::numpy ops (internal to compiler/); mirrors
// jax/_src/numpy/util.py.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "cjax/array.h"
#include "cjax/numpy.h"
#include "cjax/promotion.h"
#include "ir/source_info.h"

namespace cjax::numpy::detail {

// Each argument converted to the lattice result type of all (jnp's promote_dtypes).
std::vector<Array> promote_dtypes(std::span<const Array> args, const SourceInfo& src);
// ... to an inexact (floating) type.
std::vector<Array> promote_dtypes_inexact(std::span<const Array> args, const SourceInfo& src);
// ... to a numeric (non-bool) type.
std::vector<Array> promote_dtypes_numeric(std::span<const Array> args, const SourceInfo& src);
// NumPy rank promotion: when two non-scalar ranks differ, lower-rank operands get leading size-1
// dims (broadcast_in_dim); scalars are left alone. Throws a located TypeError naming `op` for
// incompatible shapes.
std::vector<Array> promote_shapes(std::string_view op, std::span<const Array> args,
                                  const SourceInfo& src);

std::vector<Array> promote_args(std::string_view op, std::span<const Array> args,
                                const SourceInfo& src);
std::vector<Array> promote_args_inexact(std::string_view op, std::span<const Array> args,
                                        const SourceInfo& src);
std::vector<Array> promote_args_numeric(std::string_view op, std::span<const Array> args,
                                        const SourceInfo& src);

// NumPy's broadcast of shapes (leading dims added, size-1 dims expanded); throws naming `op`.
Shape broadcast_shapes(std::string_view op, std::span<const Shape> shapes, const SourceInfo& src);

// JAX's `jit[name=...]` around `fn` while tracing (when the jit primitive exists); inline
// otherwise. The args become the jit's operands.
// With a `static_key` (what else than the operands' avals the traced body depends on, e.g. an
// axis), the body is traced once per (name, key, avals) and every call shares that jaxpr, as
// JAX's jit cache does: a program calling jnp.flip four times prints one `let _flip = ...`.
std::vector<Array> call_jitted(std::string_view name,
                               const std::function<std::vector<Array>(std::span<const Array>)>& fn,
                               std::span<const Array> args, const SourceInfo& src,
                               std::string_view static_key = {});

// Normalised, checked axes of a reduction (all axes for None).
std::vector<int64_t> reduction_axes(std::string_view op, const Array& a, const Axis& axis,
                                    const SourceInfo& src);

}  // namespace cjax::numpy::detail
