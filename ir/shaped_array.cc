#include "ir/shaped_array.h"

#include <fmt/format.h>

namespace cjax {

int64_t ShapedArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t ShapedArray::nbytes() const {
  return static_cast<size_t>(size()) * itemsize(dtype);
}

std::string ShapedArray::str_short() const {
  const AvalAnnotations* a = annotations.get();
  std::string out = a && !a->dtype_text.empty() ? a->dtype_text : std::string(short_name(dtype));
  out += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape[i]);
    if (a && i < a->dim_suffix.size()) out += a->dim_suffix[i];
  }
  if (a) out += a->inner_suffix;
  out += ']';
  if (a) out += a->suffix;
  return out;
}

std::string shape_str(const Shape& s) {
  if (s.size() == 1) return fmt::format("({},)", s[0]);
  return fmt::format("({})", fmt::join(s, ", "));
}

}  // namespace cjax
