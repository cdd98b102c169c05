// Differentiated programs kept for the process: vjp, linearize and jvp on concrete arrays (and
// grad's replay under a trace) transform each distinct trace once and reuse the result, as jit
// reuses a trace. The key is what was differentiated, its exact text (ir/exact_text.h, with f's
// captured values as inputs: their values are not part of it, their avals are) and how; a trace
// text cannot key (a nested jaxpr's consts) is transformed on every call.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "ir/jaxpr.h"

namespace cjax::detail {

struct DerivativeCacheStats {
  size_t hits = 0, misses = 0, entries = 0;
};
DerivativeCacheStats derivative_cache_stats();
void clear_derivative_cache();

// At most this many transformed programs are kept; past it the least recently used is dropped.
inline constexpr size_t kMaxCachedDerivatives = 128;

std::shared_ptr<const void> memoized_derivative_erased(
    std::string_view kind, const Jaxpr& f, std::string_view options,
    const std::function<std::shared_ptr<const void>()>& build);

// `build()` for (`kind`, f, `options`), built once per key. With CJAX_LOG_COMPILES set, each
// build says "cjax: <kind>: differentiating for (<f's input avals>)".
template <class T, class Build>
std::shared_ptr<const T> memoized_derivative(std::string_view kind, const Jaxpr& f,
                                             std::string_view options, Build&& build) {
  return std::static_pointer_cast<const T>(memoized_derivative_erased(
      kind, f, options,
      [&]() -> std::shared_ptr<const void> { return std::make_shared<const T>(build()); }));
}

}  // namespace cjax::detail
