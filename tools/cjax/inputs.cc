#include "tools/cjax/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>

#include "cjax/array.h"
#include "io/npy.h"
#include "io/npz.h"
#include "ir/errors.h"
#include "runtime/dtype_dispatch.h"

namespace cjax::cli {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The largest value of an integer dtype.
double max_value(DType t) {
  int bits = static_cast<int>(itemsize(t) * 8) - (is_unsigned_integer(t) ? 0 : 1);
  return std::ldexp(1.0, bits) - 1.0;
}

// Values in [-1, 1) for floats, [int_low, int_high) for integers, random bools; a different stream
// per argument.
runtime::Buffer random_array(const ShapedArray& aval, uint64_t seed, size_t arg, int64_t int_low,
                             int64_t int_high, const std::string& name) {
  if (is_integer(aval.dtype) && static_cast<double>(int_high - 1) > max_value(aval.dtype))
    throw UsageError(fmt::format("--int-high {}: argument {} is {}, whose largest value is {:.0f}",
                                 int_high, name, aval.str_short(), max_value(aval.dtype)));
  if (is_unsigned_integer(aval.dtype) && int_low < 0)
    throw UsageError(
        fmt::format("--int-range {},{}: argument {} is {}, which holds no negative "
                    "values",
                    int_low, int_high, name, aval.str_short()));
  ShapedArray f64(DType::f64, aval.shape);
  std::vector<double> data(static_cast<size_t>(aval.size()));
  uint64_t state = (seed + 1) * 0x9E3779B97F4A7C15ull + arg * 0xD1B54A32D192ED03ull;
  for (double& v : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double u = (state >> 11) * 0x1.0p-53;  // [0, 1)
    if (aval.dtype == DType::bool_)
      v = u < 0.5 ? 0.0 : 1.0;
    else if (is_integer(aval.dtype))
      v = static_cast<double>(int_low) + std::floor(u * static_cast<double>(int_high - int_low));
    else
      v = u * 2.0 - 1.0;
  }
  runtime::Buffer b = runtime::Buffer::from_data<double>(f64, data);
  if (aval.dtype == DType::f64) return b;
  return Array::from_buffer(b).astype(aval.dtype).buffer();
}

// A whole decimal number without sign, as from_chars reads it; nullopt when `text` is not one or
// does not fit.
template <class T>
std::optional<T> read_unsigned(const std::string& text) {
  T v{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || text[0] == '-' || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// `aval` filled with the integer whose two's-complement bits are `v` (cut to the dtype's width).
runtime::Buffer filled_integer(const ShapedArray& aval, uint64_t v) {
  runtime::Buffer b = runtime::Buffer::allocate(aval);
  runtime::dispatch<runtime::kInt>(aval.dtype, "--inputs", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = b.as<T>();
    for (int64_t i = 0, n = aval.size(); i < n; ++i) p[i] = static_cast<T>(v);
  });
  return b;
}

// An integer argument filled with `item`, read exactly (a 64-bit value does not pass through a
// double); a fraction or a value the dtype cannot hold (u32 takes 0 to 2^32 - 1) is refused.
runtime::Buffer integer_item(const std::string& item, const ShapedArray& aval,
                             const std::string& name) {
  const int bits = int(itemsize(aval.dtype) * 8);
  const bool is_unsigned = is_unsigned_integer(aval.dtype);
  const std::string range = is_unsigned ? fmt::format("0 to 2^{} - 1", bits)
                                        : fmt::format("-2^{} to 2^{} - 1", bits - 1, bits - 1);
  auto refuse = [&] {
    return UsageError(fmt::format("--inputs: '{}' (for {}) is not a {} value ({})", item, name,
                                  short_name(aval.dtype), range));
  };
  const char* end = item.data() + item.size();
  if (!item.empty() && item[0] == '-') {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), end, v);
    if (is_unsigned || ec != std::errc() || ptr != end ||
        (bits < 64 && v < -(int64_t{1} << (bits - 1))))
      throw refuse();
    return filled_integer(aval, static_cast<uint64_t>(v));
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(item.data(), end, v);
  const uint64_t max = is_unsigned ? (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1)
                                   : (uint64_t{1} << (bits - 1)) - 1;
  if (ec != std::errc() || ptr != end || v > max) throw refuse();
  return filled_integer(aval, v);
}

// `b`, read from `where` for argument `name`, checked against the argument's type.
runtime::Buffer checked_array(runtime::Buffer b, const ShapedArray& aval, const std::string& name,
                              const std::string& where) {
  if (b.aval().dtype != aval.dtype || b.aval().shape != aval.shape)
    throw Error(fmt::format(
        "argument {} is {}, but {} holds {}{}", name, aval.str_short(), where, b.aval().str_short(),
        b.aval().dtype != aval.dtype
            ? fmt::format(" (save it with .astype(np.{}))", long_name(aval.dtype))
            : ""));
  return b;
}

runtime::Buffer input_item(const std::string& item, const ShapedArray& aval,
                           const std::string& name) {
  if (ends_with(item, ".npy")) return checked_array(io::load_npy(item), aval, name, item);
  double v = 0;
  const char* end = item.data() + item.size();
  auto [ptr, ec] = std::from_chars(item.data(), end, v);
  if (ec != std::errc() || ptr != end)
    throw UsageError(
        fmt::format("--inputs: '{}' (for {}) is neither a number nor a .npy file", item, name));
  if (is_integer(aval.dtype)) return integer_item(item, aval, name);
  return runtime::Buffer::full(aval, v);
}

// --inputs DIR (one DIR/<name>.npy per argument) or --inputs FILE.npz (one entry per argument):
// the arguments found by name (`params.layers[0].W`), or in a directory by its file stem
// (`params.layers_0_.W.npy`).
bool is_named_source(const std::string& item) {
  return ends_with(item, ".npz") || std::filesystem::is_directory(item);
}

std::vector<runtime::Buffer> named_inputs(const std::string& source, const Jaxpr& jaxpr,
                                          const std::vector<std::string>& arg_names) {
  std::map<std::string, runtime::Buffer> archive;
  const bool npz = ends_with(source, ".npz");
  if (npz)
    for (auto& [name, buffer] : io::load_npz(source)) archive.emplace(name, std::move(buffer));
  std::vector<runtime::Buffer> args;
  std::vector<std::string> missing;
  for (size_t i = 0; i < jaxpr.invars.size(); ++i) {
    const std::string name = i < arg_names.size() ? arg_names[i] : fmt::format("#{}", i);
    const ShapedArray& aval = jaxpr.invars[i].aval();
    if (npz) {
      auto it = archive.find(name);
      if (it == archive.end()) it = archive.find(file_stem(name));
      if (it == archive.end()) {
        missing.push_back(name);
        continue;
      }
      args.push_back(checked_array(std::move(it->second), aval, name,
                                   fmt::format("{}'s '{}'", source, it->first)));
      continue;
    }
    const std::string path = (std::filesystem::path(source) / (file_stem(name) + ".npy")).string();
    if (!std::filesystem::exists(path)) {
      missing.push_back(name);
      continue;
    }
    args.push_back(checked_array(io::load_npy(path), aval, name, path));
  }
  if (!missing.empty())
    throw UsageError(fmt::format(
        "--inputs {}: no {} for {} of the {} arguments: {}{}", source,
        npz ? "entry" : "<name>.npy file", missing.size(), jaxpr.invars.size(),
        fmt::join(missing.begin(),
                  missing.begin() + std::ptrdiff_t(std::min<size_t>(missing.size(), 8)), ", "),
        missing.size() > 8 ? ", ..." : ""));
  return args;
}

}  // namespace

InputOptions input_options(const InputArgs& args) {
  InputOptions o;
  o.items = args.items;
  if (args.seed) {
    if (!args.items.empty())
      throw UsageError("--inputs and --seed both choose the inputs: give one of them");
    o.seed = read_unsigned<uint64_t>(*args.seed);
    if (!o.seed)
      throw UsageError(fmt::format(
          "--seed {}: a seed is an integer from 0 to 18446744073709551615 (2^64-1)", *args.seed));
  }
  if (args.int_high) {
    if (!args.seed) throw UsageError("--int-high sets the range of --seed's integers: give --seed");
    std::optional<int64_t> high = read_unsigned<int64_t>(*args.int_high);
    if (!high || *high < 1 || *high > (int64_t{1} << 31))
      throw UsageError(fmt::format(
          "--int-high {}: give an integer from 1 to 2147483648 (2^31); seeded integers are drawn "
          "from [0, N)",
          *args.int_high));
    o.int_high = *high;
  }
  if (args.int_range) {
    if (!args.seed)
      throw UsageError("--int-range sets the range of --seed's integers: give --seed");
    if (args.int_high) throw UsageError("--int-range and --int-high both set the range: give one");
    const std::string& r = *args.int_range;
    const size_t comma = r.find(',');
    auto bound = [&](const std::string& text) -> std::optional<int64_t> {
      int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
      return v;
    };
    const auto lo = comma == std::string::npos ? std::nullopt : bound(r.substr(0, comma));
    const auto hi = comma == std::string::npos ? std::nullopt : bound(r.substr(comma + 1));
    constexpr int64_t limit = int64_t{1} << 31;
    if (!lo || !hi || *lo >= *hi || *lo < -limit || *hi > limit)
      throw UsageError(fmt::format(
          "--int-range {}: give lo,hi with -2^31 <= lo < hi <= 2^31; seeded integers are drawn "
          "from [lo, hi)",
          r));
    o.int_low = *lo;
    o.int_high = *hi;
  }
  return o;
}

std::vector<runtime::Buffer> make_inputs(const Jaxpr& jaxpr,
                                         const std::vector<std::string>& arg_names,
                                         const InputOptions& opts,
                                         std::vector<runtime::Buffer> defaults) {
  size_t n = jaxpr.invars.size();
  auto name = [&](size_t i) { return i < arg_names.size() ? arg_names[i] : fmt::format("#{}", i); };
  std::vector<runtime::Buffer> args;
  if (opts.items.size() == 1 && is_named_source(opts.items[0])) {
    return named_inputs(opts.items[0], jaxpr, arg_names);
  } else if (!opts.items.empty()) {
    if (opts.items.size() != n)
      throw UsageError(
          fmt::format("--inputs gives {} values for {} arguments", opts.items.size(), n));
    for (size_t i = 0; i < n; ++i)
      args.push_back(input_item(opts.items[i], jaxpr.invars[i].aval(), name(i)));
  } else if (opts.seed) {
    for (size_t i = 0; i < n; ++i)
      args.push_back(random_array(jaxpr.invars[i].aval(), *opts.seed, i, opts.int_low,
                                  opts.int_high, name(i)));
  } else if (!defaults.empty()) {
    args = std::move(defaults);
  } else {
    for (const Var& v : jaxpr.invars) args.push_back(runtime::Buffer::full(v.aval(), 1.0));
  }
  return args;
}

std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "arg" : out;
}

std::vector<std::string> write_npy_files(const std::string& dir,
                                         const std::vector<std::string>& names,
                                         const std::vector<runtime::Buffer>& values) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError(fmt::format("cannot create directory '{}': {}", dir, ec.message()));
  std::vector<std::string> paths;
  for (size_t i = 0; i < values.size(); ++i) {
    std::string path = (std::filesystem::path(dir) / (file_stem(names[i]) + ".npy")).string();
    io::save_npy(path, values[i]);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace cjax::cli
