#include "ir/byte_size.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

namespace cjax {

std::optional<size_t> parse_byte_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  std::string number = text.substr(0, i), unit = text.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  static const std::map<std::string, double, std::less<>> units = {
      {"", 1},     {"B", 1},          {"k", 1e3},          {"kB", 1e3},
      {"K", 1024}, {"KiB", 1024},     {"M", 1048576},      {"MiB", 1048576},
      {"MB", 1e6}, {"G", 1073741824}, {"GiB", 1073741824}, {"GB", 1e9}};
  auto u = units.find(unit);
  char* end = nullptr;
  const double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  if (u == units.end() || v < 0 || !end || *end != '\0' || !std::isfinite(v * u->second) ||
      v * u->second > 1e18)
    return std::nullopt;
  return static_cast<size_t>(std::llround(v * u->second));
}

std::string format_byte_size(size_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024.0);
  if (n < (size_t{1} << 30))
    return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1024.0 * 1024.0));
  const double gib = static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0);
  if (gib < 1024) return fmt::format("{:.2f} GiB", gib);
  if (gib < 1024 * 1024) return fmt::format("{:.2f} TiB", gib / 1024.0);
  return fmt::format("{:.2f} PiB", gib / (1024.0 * 1024.0));
}

}  // namespace cjax
