// The named axes bound while a function is traced: vmap(f, ..., axis_name="i") binds "i" (with
// the batch size) while it traces f, and shard_map binds its mesh's axes, so that collectives over
// "i" (psum, axis_index, all_gather, ...; cjax/collectives.h) know the axis exists and its size,
// as JAX's axis environment does. all_to_all's shape rule reads it too (its params do not carry
// the axis size, as in JAX). Per thread, innermost last.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/params.h"

namespace cjax {

// Binds `name` to `size` while in scope (nested scopes may rebind a name: the innermost wins).
class AxisEnvScope {
 public:
  AxisEnvScope(std::string name, int64_t size);
  ~AxisEnvScope();
  AxisEnvScope(const AxisEnvScope&) = delete;
  AxisEnvScope& operator=(const AxisEnvScope&) = delete;
};

// The size of the innermost axis called `name`, or nullopt when none is bound.
std::optional<int64_t> bound_axis_size(std::string_view name);

// The bound axes as bytes, for cache keys: a trace made under one environment is not valid under
// another (its collectives' names and sizes differ). Starts with the count of axes.
std::string axis_env_key();

// The axis names a collective's param holds: `'i'` or a tuple of names (`('i', 'j')`, whose
// positional axes, ints, are skipped), in order.
std::vector<std::string> axis_names_of(const ParamValue& axes);

}  // namespace cjax

namespace cjax::detail {
using cjax::axis_env_key;
using cjax::AxisEnvScope;
using cjax::bound_axis_size;
}  // namespace cjax::detail
