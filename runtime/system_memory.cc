#include "runtime/system_memory.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "ir/byte_size.h"
#include "ir/errors.h"
#include "runtime/allocator.h"

namespace cjax::runtime {
namespace {

std::optional<size_t> read_number(const std::string& path) {
  std::ifstream in(path);
  unsigned long long v = 0;
  if (!(in >> v)) return std::nullopt;  // also "max": no limit
  return static_cast<size_t>(v);
}

// The value of `key` in a "key value" file such as memory.stat, or of "key: value kB" in
// /proc/meminfo (times `unit`).
std::optional<size_t> read_field(const std::string& path, const std::string& key, size_t unit) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name;
    unsigned long long v = 0;
    if (fields >> name >> v && (name == key || name == key + ":"))
      return static_cast<size_t>(v) * unit;
  }
  return std::nullopt;
}

// What a cgroup (v2, or v1's memory controller) still lets this process use: its limit less
// what it uses, counting reclaimable file pages as free (as container runtimes do).
std::optional<size_t> cgroup_room() {
  std::ifstream self("/proc/self/cgroup");
  std::vector<std::string> dirs;
  for (std::string line; std::getline(self, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty()) dirs.push_back("/sys/fs/cgroup" + path);  // v2
    if (controllers == "memory") dirs.push_back("/sys/fs/cgroup/memory" + path);
  }
  dirs.push_back("/sys/fs/cgroup");  // a container's own view
  dirs.push_back("/sys/fs/cgroup/memory");
  for (const std::string& d : dirs) {
    const bool v2 = read_number(d + "/memory.current").has_value();
    std::optional<size_t> limit = read_number(d + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    std::optional<size_t> used =
        read_number(d + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
    if (!limit || !used || *limit >= (size_t{1} << 62)) continue;  // unlimited
    const size_t reclaimable =
        read_field(d + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file", 1).value_or(0);
    const size_t in_use = *used > reclaimable ? *used - reclaimable : 0;
    return *limit > in_use ? *limit - in_use : 0;
  }
  return std::nullopt;
}

// ulimit -v less the address space already mapped.
std::optional<size_t> address_space_room() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const size_t mapped =
      read_number("/proc/self/statm").value_or(0) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return r.rlim_cur > mapped ? r.rlim_cur - mapped : 0;
}

}  // namespace

std::optional<MemoryLimit> memory_limit() {
  std::optional<MemoryLimit> best;
  auto consider = [&](std::optional<size_t> bytes, std::string source) {
    if (bytes && (!best || *bytes < best->bytes)) best = MemoryLimit{*bytes, std::move(source)};
  };
  if (const char* cap = std::getenv(kMemoryLimitVariable); cap && *cap) {
    std::optional<size_t> bytes = parse_byte_size(cap);
    if (!bytes)
      throw UsageError(
          fmt::format("{}='{}' is not a size: write bytes or a number with B, KiB, "
                      "MiB, GiB, kB, MB or GB",
                      kMemoryLimitVariable, cap));
    consider(bytes, fmt::format("the limit {}={} sets", kMemoryLimitVariable, cap));
  }
  // Blocks the allocator keeps for reuse are this process's to hand out again.
  const size_t cached = cached_bytes();
  auto plus_cached = [&](std::optional<size_t> b) {
    return b ? std::optional<size_t>(*b + cached) : std::nullopt;
  };
  consider(plus_cached(read_field("/proc/meminfo", "MemAvailable", 1024)),
           "the memory this machine has available");
  consider(plus_cached(cgroup_room()), "the memory this process's cgroup allows");
  consider(address_space_room(), "the address space ulimit -v allows");
  return best;
}

}  // namespace cjax::runtime
