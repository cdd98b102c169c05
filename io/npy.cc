#include "io/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "io/files.h"
#include "ir/errors.h"
#include "ir/limits.h"

namespace cjax::io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

[[noreturn]] void fail(const std::string& what) {
  throw Error("malformed .npy: " + what);
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3,), }.
// Only strings, True/False and tuples of non-negative ints appear in it.
using HeaderValue = std::variant<std::string, bool, std::vector<int64_t>>;

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  std::map<std::string, HeaderValue> parse() {
    std::map<std::string, HeaderValue> out;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string_literal();
      expect(':');
      skip_space();
      HeaderValue v = value();
      if (!out.emplace(key, std::move(v)).second) fail(fmt::format("header repeats key '{}'", key));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail(fmt::format("header: expected ',' or '}}' at offset {}", pos_));
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) fail("header: text after the dict");
    return out;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(fmt::format("header: expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string string_literal() {
    char q = peek();
    if (q != '\'' && q != '"') fail(fmt::format("header: expected a string at offset {}", pos_));
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("header: unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  int64_t integer() {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (v > (INT64_MAX - 9) / 10) fail("header: a dimension is too large");
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (pos_ == start) fail(fmt::format("header: expected a dimension at offset {}", start));
    if (peek() == 'L') ++pos_;  // Python 2 longs
    return v;
  }
  HeaderValue value() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    if (peek() == '(') {
      ++pos_;
      std::vector<int64_t> dims;
      while (true) {
        skip_space();
        if (peek() == ')') break;
        dims.push_back(integer());
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        if (peek() != ')') fail(fmt::format("header: expected ',' or ')' at offset {}", pos_));
      }
      ++pos_;
      return dims;
    }
    return string_literal();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool swap;  // big-endian data on this little-endian host
};

Descr parse_descr(const std::string& d) {
  if (d.size() < 3) fail(fmt::format("unsupported descr '{}'", d));
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    fail(fmt::format("unsupported descr '{}' (byte order '{}')", d, order));
  std::string code = d.substr(1);
  static const std::map<std::string, DType> codes = {
      {"b1", DType::bool_}, {"i1", DType::i8},  {"i2", DType::i16}, {"i4", DType::i32},
      {"i8", DType::i64},   {"u1", DType::u8},  {"u2", DType::u16}, {"u4", DType::u32},
      {"u8", DType::u64},   {"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64},
      {"V2", DType::bf16}};
  auto it = codes.find(code);
  if (it == codes.end())
    fail(fmt::format("unsupported descr '{}' (cjax reads bool, int, uint and float arrays)", d));
  return {it->second, order == '>' && itemsize(it->second) > 1};
}

// Fortran-ordered data of `shape` is the C-ordered transpose: element (i0..in) of the array sits
// at the C index of (in..i0) in the reversed shape.
void fortran_to_c(const char* src, char* dst, const Shape& shape, size_t item) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  if (n == 0) return;
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  for (size_t c = 0; c < n; ++c) {
    size_t f = 0, stride = 1;  // Fortran offset: first index varies fastest
    for (size_t k = 0; k < rank; ++k) {
      f += static_cast<size_t>(idx[k]) * stride;
      stride *= static_cast<size_t>(shape[k]);
    }
    std::memcpy(dst + c * item, src + f * item, item);
    for (size_t k = rank; k-- > 0;) {  // advance the C index: last index fastest
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
}

uint32_t read_le(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string npy_descr(DType t) {
  switch (t) {
    case DType::bool_:
      return "|b1";
    case DType::i8:
      return "|i1";
    case DType::u8:
      return "|u1";
    case DType::bf16:
      return "<V2";
    case DType::opaque:
      throw UnsupportedError("an opaque dtype cannot be written as .npy");
    default:
      break;
  }
  char kind = is_floating(t) ? 'f' : is_unsigned_integer(t) ? 'u' : 'i';
  return fmt::format("<{}{}", kind, itemsize(t));
}

runtime::Buffer read_npy(std::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
    fail("the file does not start with the .npy magic \\x93NUMPY");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t len_size = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (len_size == 0)
    fail(fmt::format("unsupported format version {}.{}", major, +static_cast<uint8_t>(bytes[7])));
  if (bytes.size() < 8 + len_size) fail("truncated header length");
  size_t header_len = read_le(bytes, 8, len_size);
  size_t data_start = 8 + len_size + header_len;
  if (header_len > bytes.size() || data_start > bytes.size())
    fail(fmt::format("header claims {} bytes, the file has {}", header_len, bytes.size()));
  auto dict = HeaderParser(bytes.substr(8 + len_size, header_len)).parse();

  auto get = [&](const char* key) -> const HeaderValue& {
    auto it = dict.find(key);
    if (it == dict.end()) fail(fmt::format("header has no '{}'", key));
    return it->second;
  };
  const auto* descr = std::get_if<std::string>(&get("descr"));
  const auto* fortran = std::get_if<bool>(&get("fortran_order"));
  const auto* dims = std::get_if<std::vector<int64_t>>(&get("shape"));
  if (!descr) fail("'descr' is not a string (structured arrays are not supported)");
  if (!fortran) fail("'fortran_order' is not True or False");
  if (!dims) fail("'shape' is not a tuple of ints");
  Descr d = parse_descr(*descr);

  // The rank and the sizes within ir/limits.h: the element count and byte size below fit.
  if (std::string why = shape_limit_error(d.dtype, *dims); !why.empty()) fail(why);
  size_t item = itemsize(d.dtype), count = 1;
  for (int64_t dim : *dims) count *= static_cast<size_t>(dim);
  size_t nbytes = count * item;
  size_t have = bytes.size() - data_start;
  if (have != nbytes)
    fail(fmt::format("shape {} of {} needs {} data bytes, the file has {}", shape_str(*dims),
                     *descr, nbytes, have));

  ShapedArray aval(d.dtype, *dims);
  runtime::Buffer out = runtime::Buffer::allocate(aval);
  char* dst = static_cast<char*>(out.data());
  const char* src = bytes.data() + data_start;
  if (nbytes == 0) return out;
  if (*fortran && dims->size() > 1)
    fortran_to_c(src, dst, *dims, item);
  else
    std::memcpy(dst, src, nbytes);
  if (d.swap)
    for (size_t i = 0; i < count; ++i) std::reverse(dst + i * item, dst + (i + 1) * item);
  return out;
}

std::string write_npy(const runtime::Buffer& buffer) {
  const ShapedArray& aval = buffer.aval();
  std::string shape = "(";
  for (int64_t d : aval.shape) shape += fmt::format("{}, ", d);
  if (aval.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (aval.shape.size() == 1)
    shape.resize(shape.size() - 1);  // NumPy's "(3,)"
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   npy_descr(aval.dtype), shape);
  // Pad with spaces and a final newline so the data starts at a multiple of 64 bytes.
  size_t prefix = header.size() + 1 > 65535 - 64 ? 12 : 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  size_t len = header.size();
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  out.append(static_cast<const char*>(buffer.data()), buffer.nbytes());
  return out;
}

runtime::Buffer load_npy(const std::string& path) {
  std::string bytes = read_file_bytes(path);
  try {
    return read_npy(bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

void save_npy(const std::string& path, const runtime::Buffer& buffer) {
  write_file_bytes(path, write_npy(buffer));
}

}  // namespace cjax::io
