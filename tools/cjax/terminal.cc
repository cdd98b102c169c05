#include "tools/cjax/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "ir/errors.h"

namespace cjax::cli {
namespace {

// JAX's pretty printer: type annotations magenta, keywords bright blue.
constexpr const char* kType = "\033[35m";
constexpr const char* kKeyword = "\033[1m\033[34m";
constexpr const char* kReset = "\033[0m";

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (mode != "auto") throw UsageError("--color must be auto, always or never");
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

size_t terminal_width() {
  winsize w{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
    return w.ws_col;
  if (const char* cols = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long n = std::strtol(cols, &end, 10);
    if (end != cols && *end == '\0' && n > 0) return static_cast<size_t>(n);
  }
  return 0;
}

size_t text_width(const std::string& text) {
  size_t widest = 0, cur = 0;
  for (char c : text) {
    if (c == '\n') {
      widest = std::max(widest, cur);
      cur = 0;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {  // not a UTF-8 continuation
      ++cur;
    }
  }
  return std::max(widest, cur);
}

std::string colorize_jaxpr(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ':' && i + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[i + 1]))) {
      // A type: `:f32[5,4]` up to the closing bracket.
      size_t end = text.find(']', i);
      if (end == std::string::npos) end = text.size() - 1;
      out += kType;
      out.append(text, i, end - i + 1);
      out += kReset;
      i = end + 1;
      continue;
    }
    if (ident_char(c) && (i == 0 || !ident_char(text[i - 1]))) {
      size_t end = i;
      while (end < text.size() && ident_char(text[end])) ++end;
      std::string word = text.substr(i, end - i);
      // A variable may be named `in` (after `hz`); the keyword is the one before the outputs.
      bool keyword =
          word == "lambda" || word == "let" || (word == "in" && text.compare(end, 2, " (") == 0);
      if (keyword)
        out += kKeyword + word + kReset;
      else
        out += word;
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace cjax::cli
