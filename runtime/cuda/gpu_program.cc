#include "runtime/cuda/gpu_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/errors.h"
#include "ir/limits.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/scalar_convert.h"

namespace cjax::runtime::cuda {
namespace {

constexpr std::string_view kMagic = "cjax-gpu-program 1";
constexpr size_t kMaxText = size_t{256} << 20;
constexpr size_t kMaxItems = size_t{1} << 20;

// Each role's name in the text, in the enum's order.
constexpr std::array<std::string_view, 4> kRoleNames = {"input", "output", "temp", "constant"};

std::string_view role_name(GpuBufferRole r) {
  return kRoleNames[static_cast<size_t>(r)];
}

std::string aval_text(const ShapedArray& a) {
  std::string s = fmt::format("{} {}", short_name(a.dtype), a.shape.size());
  for (int64_t d : a.shape) s += fmt::format(" {}", d);
  return s;
}

std::string operand_text(const GpuOperand& o) {
  return o.buffer >= 0 ? fmt::format(" b{}+{}", o.buffer, o.offset) : fmt::format(" i{}", o.bits);
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s += kDigits[c >> 4];
    s += kDigits[c & 15];
  }
  return s;
}

// A cursor over the text, by lines and by whitespace-separated words; every error names the line.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(line_, 1, "GPU program: " + what);
  }
  // The next line, without its newline.
  std::string_view line() {
    if (pos_ >= text_.size()) fail("the text ends early");
    const size_t end = std::min(text_.find('\n', pos_), text_.size());
    std::string_view l = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    words_ = l;
    return l;
  }
  // `n` raw bytes and the newline after them.
  std::string_view bytes(size_t n) {
    if (n > text_.size() - std::min(pos_, text_.size())) fail("a block runs past the end");
    std::string_view b = text_.substr(pos_, n);
    pos_ += n;
    for (char c : b) line_ += c == '\n';
    if (pos_ >= text_.size() || text_[pos_] != '\n') fail("a block is not followed by a newline");
    ++pos_;
    ++line_;
    return b;
  }
  std::string_view word() {
    while (!words_.empty() && words_.front() == ' ') words_.remove_prefix(1);
    if (words_.empty()) fail("the line ends early");
    const size_t end = std::min(words_.find(' '), words_.size());
    std::string_view w = words_.substr(0, end);
    words_.remove_prefix(end);
    return w;
  }
  void expect(std::string_view w) {
    if (std::string_view got = word(); got != w)
      fail(fmt::format("expected '{}', found '{}'", w, got));
  }
  template <class T>
  T number(std::string_view w) {
    T v{};
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size())
      fail(fmt::format("'{}' is not a number", w));
    return v;
  }
  template <class T>
  T number() {
    return number<T>(word());
  }
  size_t count(size_t limit = kMaxItems) {
    auto n = number<size_t>();
    if (n > limit) fail(fmt::format("{} items, more than the reader's limit of {}", n, limit));
    return n;
  }
  double real() {
    std::string w(word());
    char* end = nullptr;
    const double v = std::strtod(w.c_str(), &end);
    if (end != w.c_str() + w.size()) fail(fmt::format("'{}' is not a number", w));
    return v;
  }
  ShapedArray aval() {
    std::string_view name = word();
    auto t = dtype_from_short_name(name);
    if (!t) fail(fmt::format("'{}' is not a dtype", name));
    const size_t rank = count(static_cast<size_t>(kMaxRank));
    Shape shape;
    for (size_t i = 0; i < rank; ++i) {
      auto d = number<int64_t>();
      if (d < 0) fail("a negative dimension");
      shape.push_back(d);
    }
    return ShapedArray{*t, shape};
  }
  GpuOperand operand(size_t buffers) {
    std::string_view w = word();
    GpuOperand o;
    if (w.size() > 1 && w[0] == 'i') {
      o.bits = number<uint64_t>(w.substr(1));
      return o;
    }
    const size_t plus = w.find('+');
    if (w.size() < 2 || w[0] != 'b' || plus == std::string_view::npos)
      fail(fmt::format("'{}' is neither b<buffer>+<offset> nor i<bits>", w));
    o.buffer = number<int>(w.substr(1, plus - 1));
    o.offset = number<int64_t>(w.substr(plus + 1));
    if (o.buffer < 0 || static_cast<size_t>(o.buffer) >= buffers)
      fail(fmt::format("buffer {} does not exist", o.buffer));
    return o;
  }
  bool at_end() const { return pos_ >= text_.size(); }

 private:
  std::string_view text_, words_;
  size_t pos_ = 0;
  int line_ = 0;
};

std::string unhex(Reader& r, std::string_view h) {
  if (h.size() % 2) r.fail("an odd number of hex digits");
  std::string out(h.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(h.data() + 2 * i, h.data() + 2 * i + 2, v, 16);
    if (ec != std::errc() || end != h.data() + 2 * i + 2) r.fail("a malformed hex digit");
    out[i] = static_cast<char>(v);
  }
  return out;
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string to_text(const GpuProgram& p) {
  std::string s = fmt::format("{}\nname {}\ninputs {}\n", kMagic, p.name, p.in_avals.size());
  for (const ShapedArray& a : p.in_avals) s += aval_text(a) + "\n";
  s += fmt::format("outputs {}\n", p.out_avals.size());
  for (size_t i = 0; i < p.out_avals.size(); ++i)
    s += fmt::format("{} {}\n", aval_text(p.out_avals[i]), p.forwarded[i]);
  s += fmt::format("modules {}\n", p.modules.size());
  for (const GpuModule& m : p.modules) s += fmt::format("{} {}\n{}\n", m.name, m.ptx.size(), m.ptx);
  s += fmt::format("buffers {}\n", p.buffers.size());
  for (const GpuBuffer& b : p.buffers)
    s += fmt::format("{} {} {} {}\n", role_name(b.role), b.index, b.bytes, hex(b.data));
  s += fmt::format("calls {}\n", p.calls.size());
  for (const std::string& c : p.calls) s += fmt::format("{}\n{}\n", c.size(), c);
  s += fmt::format("steps {}\n", p.steps.size());
  for (const GpuStep& st : p.steps) {
    switch (st.kind) {
      case GpuStep::Kind::launch:
        s += fmt::format("launch {} {} {} {} {} {} {} {} {}", st.module, st.kernel, st.grid[0],
                         st.grid[1], st.grid[2], st.block[0], st.block[1], st.block[2],
                         st.operands.size());
        break;
      case GpuStep::Kind::call:
        s += fmt::format("call {} {}", st.call, st.operands.size());
        break;
      case GpuStep::Kind::free:
        s += fmt::format("free {}", st.buffer);
        break;
    }
    for (const GpuOperand& o : st.operands) s += operand_text(o);
    s += "\n";
  }
  s += fmt::format("reference {}\n", p.reference.size());
  for (const GpuReference& r : p.reference) {
    s += fmt::format("{:a} {:a} {}", r.rms, r.mean, r.head.size());
    for (double v : r.head) s += fmt::format(" {:a}", v);
    s += "\n";
  }
  return s + "end\n";
}

GpuProgram parse_gpu_program(std::string_view text) {
  if (text.size() > kMaxText)
    throw ParseError(1, 1,
                     fmt::format("GPU program: {} bytes of text, more than the reader's "
                                 "limit of {}",
                                 text.size(), kMaxText));
  Reader r(text);
  if (r.line() != kMagic) r.fail(fmt::format("the first line is not '{}'", kMagic));
  GpuProgram p;
  {
    std::string_view l = r.line();
    if (!l.starts_with("name ")) r.fail("expected 'name ...'");
    p.name = std::string(l.substr(5));
  }
  r.line();
  r.expect("inputs");
  for (size_t i = 0, n = r.count(); i < n; ++i) {
    r.line();
    p.in_avals.push_back(r.aval());
  }
  r.line();
  r.expect("outputs");
  for (size_t i = 0, n = r.count(); i < n; ++i) {
    r.line();
    p.out_avals.push_back(r.aval());
    const int f = r.number<int>();
    if (f < -(1 << 20) || f >= static_cast<int>(p.in_avals.size()))
      r.fail("a forwarded input out of range");
    p.forwarded.push_back(f);
  }
  r.line();
  r.expect("modules");
  for (size_t i = 0, n = r.count(); i < n; ++i) {
    r.line();
    GpuModule m{std::string(r.word()), ""};
    m.ptx = std::string(r.bytes(r.count(kMaxText)));
    p.modules.push_back(std::move(m));
  }
  r.line();
  r.expect("buffers");
  for (size_t i = 0, n = r.count(); i < n; ++i) {
    r.line();
    GpuBuffer b;
    std::string_view role = r.word();
    const auto* named = std::find(kRoleNames.begin(), kRoleNames.end(), role);
    if (named == kRoleNames.end()) r.fail(fmt::format("'{}' is not a buffer role", role));
    b.role = static_cast<GpuBufferRole>(named - kRoleNames.begin());
    b.index = r.number<int>();
    b.bytes = r.number<size_t>();
    if (b.role == GpuBufferRole::constant) {
      b.data = unhex(r, r.word());
      if (b.data.size() != b.bytes) r.fail("a constant's data is not its size");
    }
    p.buffers.push_back(std::move(b));
  }
  r.line();
  r.expect("calls");
  for (size_t i = 0, n = r.count(); i < n; ++i) {
    r.line();
    p.calls.emplace_back(r.bytes(r.count(kMaxText)));
  }
  r.line();
  r.expect("steps");
  for (size_t i = 0, n = r.count(); i < n; ++i) {
    r.line();
    GpuStep st;
    std::string_view kind = r.word();
    size_t operands = 0;
    if (kind == "launch") {
      st.kind = GpuStep::Kind::launch;
      st.module = r.number<int>();
      if (st.module < 0 || static_cast<size_t>(st.module) >= p.modules.size())
        r.fail("a launch names a module that does not exist");
      st.kernel = std::string(r.word());
      for (auto& g : st.grid) g = r.number<uint32_t>();
      for (auto& b : st.block) b = r.number<uint32_t>();
      operands = r.count(4096);
    } else if (kind == "call") {
      st.kind = GpuStep::Kind::call;
      st.call = r.number<int>();
      if (st.call < 0 || static_cast<size_t>(st.call) >= p.calls.size())
        r.fail("a call that does not exist");
      operands = r.count(4096);
    } else if (kind == "free") {
      st.kind = GpuStep::Kind::free;
      st.buffer = r.number<int>();
      if (st.buffer < 0 || static_cast<size_t>(st.buffer) >= p.buffers.size())
        r.fail("freeing a buffer that does not exist");
    } else {
      r.fail(fmt::format("'{}' is not a step", kind));
    }
    for (size_t k = 0; k < operands; ++k) st.operands.push_back(r.operand(p.buffers.size()));
    p.steps.push_back(std::move(st));
  }
  r.line();
  r.expect("reference");
  const size_t refs = r.count();
  if (refs != 0 && refs != p.out_avals.size()) r.fail("a reference for some outputs only");
  for (size_t i = 0; i < refs; ++i) {
    r.line();
    GpuReference ref;
    ref.rms = r.real();
    ref.mean = r.real();
    for (size_t k = 0, n = r.count(); k < n; ++k) ref.head.push_back(r.real());
    p.reference.push_back(std::move(ref));
  }
  if (r.line() != "end") r.fail("expected 'end'");
  return p;
}

std::vector<Buffer> gpu_test_inputs(const std::vector<ShapedArray>& avals, uint64_t seed) {
  std::vector<Buffer> out;
  for (size_t a = 0; a < avals.size(); ++a) {
    const ShapedArray& aval = avals[a];
    Buffer b = Buffer::allocate(aval);
    auto hash = [&](int64_t i) { return mix(mix(seed * 1000003 + a) ^ static_cast<uint64_t>(i)); };
    if (aval.dtype == DType::key_fry) {  // a key's words: any bits
      auto* words = static_cast<char*>(b.data());
      for (int64_t i = 0; i < aval.size(); ++i) {
        const uint64_t h = hash(i);
        std::memcpy(words + static_cast<size_t>(i) * itemsize(aval.dtype), &h,
                    std::min(itemsize(aval.dtype), sizeof h));
      }
    } else {
      dispatch<kAll>(aval.dtype, "gpu_test_inputs", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* p = b.as<T>();
        for (int64_t i = 0; i < aval.size(); ++i) {
          const uint64_t h = hash(i);
          const double unit = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
          const double x = is_floating(aval.dtype)           ? 0.2 * unit - 0.1
                           : aval.dtype == DType::bool_      ? static_cast<double>(h & 1)
                           : is_unsigned_integer(aval.dtype) ? static_cast<double>(h % 10)
                                                             : static_cast<double>(h % 19) - 9;
          p[i] = convert_scalar<T>(x);
        }
      });
    }
    out.push_back(std::move(b));
  }
  return out;
}

GpuReference summarize(const Buffer& b, size_t head) {
  GpuReference r;
  if (b.aval().dtype == DType::key_fry) {  // words as numbers
    const auto* w = static_cast<const uint32_t*>(b.data());
    for (size_t i = 0; i < std::min(head, b.nbytes() / 4); ++i) r.head.push_back(w[i]);
    return r;
  }
  const std::vector<double> v = b.to_doubles();
  // Over the finite elements (where NaNs and infinities are, the head shows for the first ones).
  double sum = 0, sum_sq = 0;
  size_t finite = 0;
  for (double x : v)
    if (std::isfinite(x)) {
      sum += x;
      sum_sq += x * x;
      ++finite;
    }
  if (finite > 0) {
    r.mean = sum / static_cast<double>(finite);
    r.rms = std::sqrt(sum_sq / static_cast<double>(finite));
  }
  r.head.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(head, v.size())));
  return r;
}

std::string compare_to_reference(const GpuReference& got, const GpuReference& want, double rtol) {
  if (got.head.size() != want.head.size())
    return fmt::format("{} leading elements, want {}", got.head.size(), want.head.size());
  const double scale = want.rms;
  auto close = [&](double g, double w) {
    if (std::isnan(w)) return std::isnan(g);
    if (std::isinf(w)) return g == w;
    return std::abs(g - w) <= rtol * std::max(std::abs(w), scale);
  };
  for (size_t i = 0; i < want.head.size(); ++i)
    if (!close(got.head[i], want.head[i]))
      return fmt::format("element {}: {} against {}", i, got.head[i], want.head[i]);
  if (!close(got.rms, want.rms)) return fmt::format("RMS {} against {}", got.rms, want.rms);
  if (!(std::abs(got.mean - want.mean) <= rtol * std::max(scale, std::abs(want.mean))))
    return fmt::format("mean {} against {}", got.mean, want.mean);
  return "";
}

}  // namespace cjax::runtime::cuda
