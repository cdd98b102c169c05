// What the CLI knows about the terminal: whether to colour, how wide it is, and the colouring of
// printed jaxprs.
#pragma once

#include <cstddef>
#include <string>

namespace cjax::cli {

// "always" -> true, "never" -> false, "auto" -> standard output is a terminal and NO_COLOR is
// unset (https://no-color.org). Throws UsageError for any other mode.
bool use_color(const std::string& mode);

// The width of the terminal on standard output; COLUMNS when set; 0 (unlimited) otherwise.
size_t terminal_width();

// A printed jaxpr with ANSI colours, as JAX's `pretty_print(use_color=True)` colours it: type
// annotations (`:f32[5,4]`) magenta, the keywords lambda, let and in bright blue.
std::string colorize_jaxpr(const std::string& text);

// The width of the widest line of `text`, in characters (UTF-8 aware).
size_t text_width(const std::string& text);

}  // namespace cjax::cli
