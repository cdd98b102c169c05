// Where an equation came from in the user's program: file, line, column and enclosing function.
// Captured with std::source_location, so the strings are static and copying is cheap.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

namespace cjax {

struct SourceInfo {
  const char* file = "";      // as the compiler spells it (__FILE__)
  const char* function = "";  // the compiler's full signature; see short_function_name()
  uint32_t line = 0;
  uint32_t column = 0;  // 1-based, as std::source_location reports it; 0 = unknown

  SourceInfo() = default;
  SourceInfo(const std::source_location& l)  // NOLINT: implicit on purpose
      : file(l.file_name()), function(l.function_name()), line(l.line()), column(l.column()) {}

  bool known() const { return line != 0; }
  // `examples/tutorial.cc:12:10 (g)`, the form JAX's source_info_util.summarize gives;
  // `unknown` when no location was recorded.
  std::string summarize() const;
  // "examples/tutorial.cc:12:10" (no function), or "" when unknown.
  std::string position() const;
};

// A file of this project relative to its checkout (`examples/tutorial.cc`); any other path as
// the compiler recorded it.
std::string_view display_file(const char* file);

// The unqualified function name inside a compiler signature, the analogue of Python's
// co_qualname: "cjax::Array g(const cjax::Array&, const cjax::Array&)" -> "g";
// "int main()::<lambda(const cjax::Array&)>" -> "main::<lambda>".
// (File names need no such step: the build maps the project root away with -ffile-prefix-map, so
// std::source_location already reports `examples/tutorial.cc`.)
std::string short_function_name(const char* signature);

}  // namespace cjax
