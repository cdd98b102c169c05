// Internal to the runtime: lookup in the kernel table, for apply_primitive.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/interpreter.h"

namespace cjax::runtime {

struct KernelEntry {
  Kernel kernel = nullptr;
  bool produces_outputs = false;  // OutputMode::produced
};

std::optional<KernelEntry> find_kernel(const Primitive& prim);

// Names the primitive whose kernel runs on this thread while in scope (see current_primitive()).
class CurrentPrimitiveScope {
 public:
  explicit CurrentPrimitiveScope(std::string_view name);
  ~CurrentPrimitiveScope();
  CurrentPrimitiveScope(const CurrentPrimitiveScope&) = delete;
  CurrentPrimitiveScope& operator=(const CurrentPrimitiveScope&) = delete;

 private:
  std::string_view saved_;
};

}  // namespace cjax::runtime
