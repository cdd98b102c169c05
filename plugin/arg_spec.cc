#include <fmt/format.h>

#include <cctype>

#include "ir/errors.h"
#include "ir/limits.h"
#include "plugin/plugin_abi.h"

namespace cjax::plugin {

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  if (trim(text).empty()) return out;
  int depth = 0;  // commas inside [...] belong to a spec
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.emplace_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

std::string printable(std::string_view s, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max_chars; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    out += c < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", c) : std::string(1, s[i]);
  }
  if (s.size() > max_chars) out += "...";
  return out;
}

ShapedArray parse_arg_spec(std::string_view spec) {
  auto bad = [&](const char* why) {
    return Error(fmt::format("bad argument spec '{}': {} (expected e.g. f32[4,4] or f32[])",
                             printable(spec, 60), why));
  };
  for (char ch : spec)
    if (auto c = static_cast<unsigned char>(ch); c < 0x20 || c == 0x7f)
      throw bad("it holds a control character");
  size_t open = spec.find('[');
  if (open == std::string_view::npos || spec.empty() || spec.back() != ']') throw bad("no [dims]");
  auto dtype = dtype_from_short_name(spec.substr(0, open));
  if (!dtype || *dtype == DType::opaque) throw bad("unknown dtype");
  Shape shape;
  std::string_view dims = spec.substr(open + 1, spec.size() - open - 2);
  if (dims.empty()) return ShapedArray(*dtype, shape);
  for (const std::string& d : split_list(dims)) {
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos)
      throw bad("a dimension is not a non-negative integer");
    shape.push_back(std::stoll(d));
  }
  if (std::string why = shape_limit_error(*dtype, shape); !why.empty()) throw bad(why.c_str());
  return ShapedArray(*dtype, shape);
}

}  // namespace cjax::plugin
