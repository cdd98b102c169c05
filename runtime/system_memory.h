// How much memory this process may still use: the smallest of what the kernel reports available
// (/proc/meminfo's MemAvailable), the cgroup's limit less its usage (containers), the address-space
// limit (ulimit -v), and CJAX_MEMORY_LIMIT when set. Programs whose modelled peak exceeds it are
// refused before they run (cjax/memory_check.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cjax::runtime {

// The environment variable that caps the memory cjax lets a program use, in bytes (a plain
// number, or with a unit: 512MiB, 2GiB, 4GB).
inline constexpr const char* kMemoryLimitVariable = "CJAX_MEMORY_LIMIT";

struct MemoryLimit {
  size_t bytes = 0;
  std::string source;  // what set it: "available memory", "the cgroup limit", ...
};

// The limit now, or nullopt when none of the sources can be read (then nothing is refused).
// Blocks held by the allocator's reuse cache count as available. Throws UsageError when
// CJAX_MEMORY_LIMIT is not a size.
std::optional<MemoryLimit> memory_limit();

}  // namespace cjax::runtime
