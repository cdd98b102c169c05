#include "compiler/cpu/object_cache.h"

#include <fmt/format.h>
#include <link.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/xxhash.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>

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
    return fmt::format("{}:{}:{}", search.path, st.st_size, st.st_mtime);
  return search.path;
}

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
  const auto thread = std::hash<std::thread::id>()(std::this_thread::get_id());
  return dir / fmt::format(".{}.{}.{:x}.{}.tmp", key.substr(0, 16), getpid(), thread,
                           counter.fetch_add(1));
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
       {std::string_view("cjax object cache 1"), std::string_view(LLVM_VERSION_STRING),
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
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return std::nullopt;  // no entry
  auto corrupt = [&]() -> std::optional<std::string> {
    fs::remove(path, ec);
    return std::nullopt;
  };
  if (size < kHeaderBytes || size > kMaxCachedObjectBytes + kHeaderBytes) return corrupt();
  std::string bytes(size, '\0');
  {
    std::ifstream in(path, std::ios::binary);
    if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) return corrupt();
  }
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return corrupt();
  p += sizeof kMagic;
  if (std::string_view(p, kKeyChars) != key) return corrupt();
  p += kKeyChars;
  const uint64_t object_size = read_u64(p);
  const uint64_t checksum = read_u64(p + sizeof(uint64_t));
  if (object_size != size - kHeaderBytes) return corrupt();
  std::string object = bytes.substr(kHeaderBytes);
  if (llvm::xxh3_64bits(object) != checksum) return corrupt();
  return object;
}

void store_cached_object(const fs::path& dir, const std::string& key, std::string_view object) {
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
}

}  // namespace cjax::lower
