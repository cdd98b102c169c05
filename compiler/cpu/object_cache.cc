#include "compiler/cpu/object_cache.h"

#include <fmt/format.h>
#include <link.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/Signals.h>
#include <llvm/Support/xxhash.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace cjax::lower {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'C', 'J', 'A', 'X', 'O', 'B', 'J', '1'};
constexpr size_t kKeyChars = 64;  // a hex SHA-256
// magic, key, object size (u64), checksum of the object (u64), then the object.
constexpr size_t kHeaderBytes = sizeof(kMagic) + kKeyChars + 2 * sizeof(uint64_t);

// The GNU build id of the module (executable or shared library) holding this code: it changes
// with every change to cjax's code, so entries made by another build are never found. Where the
// linker wrote none, the module's path, size and modification time stand in.
std::string this_build_id() {
  struct Search {
    const void* address;
    std::string id, path;
  } search{reinterpret_cast<const void*>(&this_build_id), "", ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        const auto at = reinterpret_cast<uintptr_t>(s->address);
        bool contains = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + p.p_vaddr;
          if (p.p_type == PT_LOAD && at >= start && at < start + p.p_memsz) contains = true;
        }
        if (!contains) return 0;
        s->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          if (p.p_type != PT_NOTE) continue;
          const char* note = reinterpret_cast<const char*>(info->dlpi_addr + p.p_vaddr);
          const char* end = note + p.p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            const auto* h = reinterpret_cast<const ElfW(Nhdr)*>(note);
            const char* name = note + sizeof(ElfW(Nhdr));
            const char* desc = name + ((h->n_namesz + 3) & ~3u);
            if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0)
              s->id = llvm::toHex(llvm::StringRef(desc, h->n_descsz), /*LowerCase=*/true);
            note = desc + ((h->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  if (!search.id.empty()) return search.id;
  struct stat st {};
  if (stat(search.path.c_str(), &st) == 0)
    return fmt::format("{}:{}:{}.{:09}", search.path, st.st_size, st.st_mtim.tv_sec,
                       st.st_mtim.tv_nsec);
  return search.path;
}

// Storing an entry goes through MLIR's dumpToObjectFile, whose LLVM ToolOutputFile has LLVM
// install its signal handlers (to remove unfinished files on a crash) and, the first time, give
// the calling thread a larger alternate signal stack of its own allocation. On a worker thread
// (`cjax bench` compiles two executables at once) AddressSanitizer then fails to unmap that stack
// when the thread exits. Registering once at load time gives it to the main thread instead.
[[maybe_unused]] const bool kSignalHandlersOnMainThread = [] {
  llvm::sys::AddSignalHandler([](void*) {}, nullptr);
  return true;
}();

bool cache_off(std::string_view v) {
  return v.empty() || v == "0" || v == "off";
}

uint64_t read_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void append_u64(std::string& out, uint64_t v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out.append(bytes, sizeof v);
}

}  // namespace

fs::path temporary_path(const fs::path& dir, const std::string& key) {
  static std::atomic<uint64_t> counter{0};
  // Random bits too: processes in other PID namespaces may share the folder.
  static const uint64_t process_nonce =
      (uint64_t{std::random_device()()} << 32) ^ std::random_device()();
  const auto thread = std::hash<std::thread::id>()(std::this_thread::get_id());
  return dir / fmt::format(".{}.{}.{:x}.{:x}.{}.tmp", key.substr(0, 16), getpid(), process_nonce,
                           thread, counter.fetch_add(1));
}

bool object_cache_writable(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return !ec && access(dir.c_str(), W_OK | X_OK) == 0;
}

std::optional<fs::path> object_cache_dir() {
  if (const char* named = std::getenv(kCacheDirVariable))
    return cache_off(named) ? std::nullopt : std::optional<fs::path>(named);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "cjax";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "cjax";
  return std::nullopt;
}

std::string object_cache_key(std::string_view module_text, std::string_view target) {
  static const std::string build = this_build_id();
  llvm::SHA256 hash;
  // Each part with its length, so that no two different lists of parts hash alike.
  for (std::string_view part :
       {std::string_view("cjax object cache 2"), std::string_view(LLVM_VERSION_STRING),
        std::string_view(build), target, module_text}) {
    hash.update(std::to_string(part.size()) + ":");
    hash.update(llvm::StringRef(part.data(), part.size()));
  }
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), digest.size()), /*LowerCase=*/true);
}

fs::path cached_object_path(const fs::path& dir, const std::string& key) {
  return dir / (key + ".o");
}

std::optional<std::string> load_cached_object(const fs::path& dir, const std::string& key) {
  const fs::path path = cached_object_path(dir, key);
  // One open file throughout: an entry renamed over this one meanwhile is not mixed in.
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;  // no entry
  std::error_code ec;
  auto corrupt = [&]() -> std::optional<std::string> {
    fs::remove(path, ec);
    return std::nullopt;
  };
  const std::streamoff size = in.tellg();
  if (size < static_cast<std::streamoff>(kHeaderBytes) ||
      static_cast<uintmax_t>(size) > kMaxCachedObjectBytes + kHeaderBytes)
    return corrupt();
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return corrupt();
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return corrupt();
  p += sizeof kMagic;
  if (std::string_view(p, kKeyChars) != key) return corrupt();
  p += kKeyChars;
  const uint64_t object_size = read_u64(p);
  const uint64_t checksum = read_u64(p + sizeof(uint64_t));
  if (object_size != bytes.size() - kHeaderBytes) return corrupt();
  std::string object = bytes.substr(kHeaderBytes);
  if (llvm::xxh3_64bits(object) != checksum) return corrupt();
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
  return object;
}

namespace {

// Removes the least recently used entries once they pass `max_bytes`, down to 3/4 of it.
void evict_least_recent(const fs::path& dir, uintmax_t max_bytes) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  uintmax_t total = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".o") continue;
    const uintmax_t size = it->file_size(ec);
    const fs::file_time_type when = it->last_write_time(ec);
    if (ec) {
      ec.clear();
      continue;
    }
    total += size;
    entries.push_back({when, it->path()});
  }
  if (total <= max_bytes) return;
  std::sort(entries.begin(), entries.end());
  for (const auto& [when, path] : entries) {
    if (total <= max_bytes / 4 * 3) break;
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec && fs::remove(path, ec)) total -= size;
  }
}

}  // namespace

void store_cached_object(const fs::path& dir, const std::string& key, std::string_view object,
                         uintmax_t max_bytes) {
  if (key.size() != kKeyChars || object.size() > kMaxCachedObjectBytes) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return;
  std::string entry(kMagic, sizeof kMagic);
  entry += key;
  append_u64(entry, object.size());
  append_u64(entry, llvm::xxh3_64bits(llvm::StringRef(object.data(), object.size())));
  entry += object;
  const fs::path tmp = temporary_path(dir, key);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.write(entry.data(), static_cast<std::streamsize>(entry.size())) || !out.flush()) {
      fs::remove(tmp, ec);
      return;
    }
  }
  // rename() replaces the entry atomically: a concurrent reader opens the old file or the new.
  fs::rename(tmp, cached_object_path(dir, key), ec);
  if (ec) fs::remove(tmp, ec);
  evict_least_recent(dir, max_bytes);
}

}  // namespace cjax::lower
