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

// A jaxpr JAX printed, from ../shared/reference/wild-jaxprs/ without its final newlines; empty
// when the reference folder is not beside the checkout (a user's clone).
inline std::string wild_jaxpr(const std::string& name) {
  std::ifstream in(std::string(CJAX_SHARED_DIR) + "/reference/wild-jaxprs/" + name);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

}  // namespace golden

// Declares `var` holding the wild jaxpr `name`, or skips the test case when it is missing.
#define REQUIRE_WILD(var, name)                                            \
  std::string var = golden::wild_jaxpr(name);                              \
  if (var.empty()) {                                                       \
    WARN("reference file " name " not found under CJAX_SHARED_DIR; skip"); \
    return;                                                                \
  }
