// Reads a golden text from tests/golden/ (tests run from the repository root).
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace golden {

// The file's text without its final newline.
inline std::string text(const std::string& name) {
  std::ifstream in(std::string(CJAX_SOURCE_DIR) + "/tests/golden/" + name);
  if (!in) throw std::runtime_error("missing golden file tests/golden/" + name);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  if (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

}  // namespace golden
