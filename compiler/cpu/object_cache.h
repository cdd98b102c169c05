// The persistent compilation cache: the object code of compiled programs, kept on disk so that
// another process (a second `cjax grad`, a restarted training run) loads it instead of running
// MLIR's and LLVM's passes again. An entry is keyed by a hash of the lowered MLIR module, the
// target (triple, CPU, features), LLVM's version and the build of cjax itself (its build id), so a
// rebuilt cjax or another CPU never loads stale code. Entries are written to a temporary file and
// renamed into place (safe under concurrent processes) and carry their size and a checksum: a
// torn, truncated or altered entry is detected, removed and rebuilt, never loaded.
//
// The folder: CJAX_CACHE_DIR, or by default $XDG_CACHE_HOME/cjax (else ~/.cache/cjax);
// CJAX_CACHE_DIR=off (or 0, or empty) turns the cache off. When the entries pass
// kMaxCacheBytes, the least recently used are removed; the folder can be deleted at any time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cjax::lower {

// The environment variable that names the cache's folder.
inline constexpr const char* kCacheDirVariable = "CJAX_CACHE_DIR";

// The cache's folder now (read at each compile), or nullopt when the cache is off.
std::optional<std::filesystem::path> object_cache_dir();

// The key of a module's object code: a hex SHA-256 over `module_text`, `target` (what the code
// generator was set up for) and this build of cjax.
std::string object_cache_key(std::string_view module_text, std::string_view target);

// Entries larger than this are refused (read as corrupt), not read into memory.
inline constexpr size_t kMaxCachedObjectBytes = size_t{1} << 30;
// The cache's size: a store that takes the entries past it removes the least recently used
// (by modification time, which a load renews) down to three quarters of it.
inline constexpr uintmax_t kMaxCacheBytes = uintmax_t{2} << 30;

// Whether `dir` exists (or can be made) and this process may write to it.
bool object_cache_writable(const std::filesystem::path& dir);

// The object code stored under `key`, or nullopt when there is none. An entry that fails its
// checks (header, key, size, checksum) is removed and reported as absent.
std::optional<std::string> load_cached_object(const std::filesystem::path& dir,
                                              const std::string& key);

// Stores `object` under `key`: written beside its final name and renamed over it, so a reader
// sees a whole entry or none. A failure to write (a read-only folder, a full disk) leaves the
// cache without the entry and is otherwise ignored: the cache only saves time.
// Then, when the entries pass `max_bytes`, removes the least recently used.
void store_cached_object(const std::filesystem::path& dir, const std::string& key,
                         std::string_view object, uintmax_t max_bytes = kMaxCacheBytes);

// A fresh name in `dir` for a temporary file of `key`'s (unique across threads and processes).
std::filesystem::path temporary_path(const std::filesystem::path& dir, const std::string& key);

// The path of `key`'s entry (for tests that damage one).
std::filesystem::path cached_object_path(const std::filesystem::path& dir, const std::string& key);

}  // namespace cjax::lower
