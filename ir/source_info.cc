#include "ir/source_info.h"

#include <fmt/format.h>

#include <string_view>

namespace cjax {
namespace {

// The name of the function whose parameter list is the first depth-0 '(' in `sig`.
std::string_view name_before_params(std::string_view sig) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < sig.size(); ++i) {
    char c = sig[i];
    if (c == '<' || c == '[') ++depth;
    if (c == '>' || c == ']') --depth;
    if (depth != 0) continue;
    if (c == ' ') start = i + 1;
    if (c == '(') {
      // `operator()` keeps its own parentheses.
      std::string_view name = sig.substr(start, i - start);
      if (name.ends_with("operator") && i + 1 < sig.size() && sig[i + 1] == ')')
        return sig.substr(start, i + 2 - start);
      return name;
    }
  }
  return sig.substr(start);
}

std::string_view last_component(std::string_view qualified) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < qualified.size(); ++i) {
    char c = qualified[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth == 0 && c == ':' && qualified[i + 1] == ':') start = i + 2;
  }
  return qualified.substr(start);
}

}  // namespace

std::string short_function_name(const char* signature) {
  std::string_view sig = signature ? signature : "";
  if (sig.empty()) return "";
  size_t lambda = sig.find("::<lambda");
  if (lambda != std::string_view::npos) {
    std::string outer = short_function_name(std::string(sig.substr(0, lambda)).c_str());
    return outer.empty() ? "<lambda>" : outer + "::<lambda>";
  }
  return std::string(last_component(name_before_params(sig)));
}

#ifndef CJAX_SOURCE_ROOT
#define CJAX_SOURCE_ROOT ""
#endif

// A file under the checkout, named relative to it. scripts/build.sh lets ccache hand the compiler
// paths relative to the build directory (`../examples/tutorial.cc`, CCACHE_BASEDIR), so that a
// clone elsewhere hits the same cache entries: those lose their leading `../`.
std::string_view display_file(const char* file) {
  std::string_view f = file, root = CJAX_SOURCE_ROOT;
  if (!root.empty() && f.starts_with(root)) f.remove_prefix(root.size());
  while (f.starts_with("../")) f.remove_prefix(3);
  return f;
}

std::string SourceInfo::position() const {
  if (!known()) return "";
  if (column == 0) return fmt::format("{}:{}", display_file(file), line);
  return fmt::format("{}:{}:{}", display_file(file), line, column);
}

std::string SourceInfo::summarize() const {
  if (!known()) return "unknown";
  std::string fn = short_function_name(function);
  return fmt::format("{} ({})", position(), fn);
}

}  // namespace cjax
