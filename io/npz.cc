#include "io/npz.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <set>

#include "io/files.h"
#include "io/npy.h"
#include "ir/errors.h"

namespace cjax::io {
namespace {

// Zip's record signatures and the fields this reader and writer use (PKWARE's APPNOTE.TXT).
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentral = 0x06054b50;
constexpr uint32_t kZip64EndOfCentral = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint16_t kZip64Extra = 0x0001;
constexpr uint16_t kStored = 0;
constexpr uint32_t kNoValue32 = 0xffffffffu;
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndSize = 22;

[[noreturn]] void fail(const std::string& what) {
  throw Error("malformed .npz: " + what);
}

uint32_t crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (char ch : bytes) c = table[(c ^ static_cast<uint8_t>(ch)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// Little-endian fields read with bounds checks against the whole file.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  uint64_t get(uint64_t at, size_t n, const char* what) const {
    if (at > bytes_.size() || n > bytes_.size() - at)
      fail(fmt::format("{} at byte {} lies past the end of the file ({} bytes)", what, at,
                       bytes_.size()));
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<uint8_t>(bytes_[at + i])) << (8 * i);
    return v;
  }
  std::string_view span(uint64_t at, uint64_t n, const std::string& what) const {
    if (at > bytes_.size() || n > bytes_.size() - at)
      fail(fmt::format("{} ({} bytes at byte {}) lies past the end of the file ({} bytes)", what, n,
                       at, bytes_.size()));
    return bytes_.substr(at, n);
  }
  size_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

struct Entry {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// The end-of-central-directory record, searched from the end (it may be followed by a comment).
uint64_t find_end_record(const Reader& r) {
  if (r.size() < kEndSize) fail("too short for a zip archive");
  const uint64_t last = r.size() - kEndSize;
  const uint64_t stop = last > 0xffff ? last - 0xffff : 0;
  for (uint64_t at = last + 1; at-- > stop;)
    if (r.get(at, 4, "end record") == kEndOfCentral) return at;
  fail("no end-of-central-directory record (not a zip archive)");
}

// Replaces 0xffffffff fields by the zip64 extra field's values, in the order APPNOTE gives.
void apply_zip64_extra(const Reader& r, uint64_t extra, uint64_t extra_len, Entry& e,
                       bool has_offset) {
  for (uint64_t at = extra; at + 4 <= extra + extra_len;) {
    const uint64_t id = r.get(at, 2, "extra field"), len = r.get(at + 2, 2, "extra field");
    if (id == kZip64Extra) {
      uint64_t p = at + 4;
      auto take = [&](uint64_t& field) {
        if (field != kNoValue32) return;
        if (p + 8 > at + 4 + len) fail(fmt::format("entry '{}': short zip64 extra field", e.name));
        field = r.get(p, 8, "zip64 extra field");
        p += 8;
      };
      take(e.uncompressed);
      take(e.compressed);
      if (has_offset) take(e.local_offset);
      return;
    }
    at += 4 + len;
  }
}

std::vector<Entry> read_central_directory(const Reader& r) {
  const uint64_t end = find_end_record(r);
  uint64_t count = r.get(end + 10, 2, "end record");
  uint64_t dir_offset = r.get(end + 16, 4, "end record");
  if (count == 0xffff || dir_offset == kNoValue32) {  // zip64: the locator precedes the record
    if (end < 20 || r.get(end - 20, 4, "zip64 locator") != kZip64Locator)
      fail("zip64 archive without its end-record locator");
    const uint64_t rec = r.get(end - 20 + 8, 8, "zip64 locator");
    if (r.get(rec, 4, "zip64 end record") != kZip64EndOfCentral) fail("bad zip64 end record");
    count = r.get(rec + 32, 8, "zip64 end record");
    dir_offset = r.get(rec + 48, 8, "zip64 end record");
  }
  if (count > kMaxNpzEntries)
    fail(fmt::format("{} entries; the limit is {}", count, kMaxNpzEntries));
  std::vector<Entry> entries;
  std::set<std::string> seen;
  uint64_t at = dir_offset;
  for (uint64_t i = 0; i < count; ++i) {
    if (r.get(at, 4, "central directory") != kCentralHeader)
      fail(fmt::format("central directory entry {} has a bad signature", i));
    Entry e;
    e.method = static_cast<uint16_t>(r.get(at + 10, 2, "central directory"));
    e.crc = static_cast<uint32_t>(r.get(at + 16, 4, "central directory"));
    e.compressed = r.get(at + 20, 4, "central directory");
    e.uncompressed = r.get(at + 24, 4, "central directory");
    const uint64_t name_len = r.get(at + 28, 2, "central directory");
    const uint64_t extra_len = r.get(at + 30, 2, "central directory");
    const uint64_t comment_len = r.get(at + 32, 2, "central directory");
    e.local_offset = r.get(at + 42, 4, "central directory");
    if (name_len > kMaxNpzNameBytes)
      fail(fmt::format("entry {} has a name of {} bytes; the limit is {}", i, name_len,
                       kMaxNpzNameBytes));
    e.name = std::string(r.span(at + kCentralHeaderSize, name_len, "entry name"));
    apply_zip64_extra(r, at + kCentralHeaderSize + name_len, extra_len, e, true);
    if (!seen.insert(e.name).second) fail(fmt::format("entry '{}' appears twice", e.name));
    entries.push_back(std::move(e));
    at += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return entries;
}

std::string array_name(const std::string& entry) {
  constexpr std::string_view suffix = ".npy";
  if (entry.size() > suffix.size() && entry.ends_with(suffix))
    return entry.substr(0, entry.size() - suffix.size());
  return entry;
}

void put(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// A local or central header's fields after the signature and versions, for a stored entry.
void put_entry_fields(std::string& out, uint32_t crc, uint32_t size, size_t name_len) {
  put(out, 0, 2);        // flags
  put(out, kStored, 2);  // method
  put(out, 0, 2);        // modification time
  put(out, 0x21, 2);     // modification date: 1980-01-01
  put(out, crc, 4);
  put(out, size, 4);  // compressed
  put(out, size, 4);  // uncompressed
  put(out, name_len, 2);
  put(out, 0, 2);  // extra field length
}

}  // namespace

NamedBuffers read_npz(std::string_view bytes) {
  const Reader r(bytes);
  NamedBuffers out;
  for (const Entry& e : read_central_directory(r)) {
    if (e.method != kStored)
      throw UnsupportedError(fmt::format(
          "npz entry '{}' is compressed (method {}, as np.savez_compressed writes); only "
          "uncompressed archives (np.savez) are read",
          e.name, e.method));
    if (e.compressed != e.uncompressed)
      fail(fmt::format("stored entry '{}' has sizes {} and {}", e.name, e.compressed,
                       e.uncompressed));
    if (r.get(e.local_offset, 4, "local header") != kLocalHeader)
      fail(fmt::format("entry '{}': bad local header signature", e.name));
    const uint64_t data = e.local_offset + kLocalHeaderSize +
                          r.get(e.local_offset + 26, 2, "local header") +
                          r.get(e.local_offset + 28, 2, "local header");
    const std::string_view npy = r.span(data, e.compressed, "entry '" + e.name + "'");
    if (crc32(npy) != e.crc) fail(fmt::format("entry '{}' fails its CRC-32 check", e.name));
    try {
      out.emplace_back(array_name(e.name), read_npy(npy));
    } catch (const Error& err) {
      throw Error(fmt::format("npz entry '{}': {}", e.name, err.what()));
    }
  }
  return out;
}

std::string write_npz(const NamedBuffers& arrays) {
  if (arrays.size() > kMaxNpzEntries)
    throw UsageError(
        fmt::format("save_npz: {} arrays; the limit is {}", arrays.size(), kMaxNpzEntries));
  std::string out, central;
  std::set<std::string> seen;
  for (const auto& [name, buffer] : arrays) {
    const std::string entry = name + ".npy";
    if (name.empty() || name.find('/') != std::string::npos || entry.size() > kMaxNpzNameBytes)
      throw UsageError(fmt::format("save_npz: bad array name '{}'", name));
    if (!seen.insert(name).second)
      throw UsageError(fmt::format("save_npz: array name '{}' given twice", name));
    const std::string npy = write_npy(buffer);
    if (npy.size() >= kNoValue32 || out.size() >= kNoValue32)
      throw UnsupportedError(
          fmt::format("save_npz: '{}' would pass 4 GiB, which needs zip64 (not written)", name));
    const auto offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = crc32(npy), size = static_cast<uint32_t>(npy.size());
    put(out, kLocalHeader, 4);
    put(out, 20, 2);  // version needed: 2.0
    put_entry_fields(out, crc, size, entry.size());
    out += entry;
    out += npy;
    put(central, kCentralHeader, 4);
    put(central, 20, 2);  // version made by
    put(central, 20, 2);  // version needed
    put_entry_fields(central, crc, size, entry.size());
    put(central, 0, 2);  // comment length
    put(central, 0, 2);  // disk number
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, offset, 4);
    central += entry;
  }
  const uint64_t dir_offset = out.size();
  out += central;
  put(out, kEndOfCentral, 4);
  put(out, 0, 2);  // this disk
  put(out, 0, 2);  // the directory's disk
  put(out, arrays.size(), 2);
  put(out, arrays.size(), 2);
  put(out, central.size(), 4);
  put(out, dir_offset, 4);
  put(out, 0, 2);  // comment length
  return out;
}

NamedBuffers load_npz(const std::string& path) {
  const std::string bytes = read_file_bytes(path);
  try {
    return read_npz(bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

void save_npz(const std::string& path, const NamedBuffers& arrays) {
  write_file_bytes(path, write_npz(arrays));
}

}  // namespace cjax::io
