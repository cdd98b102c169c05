// Reads a golden text from tests/golden/ (tests run from the repository root).
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// Case `title` of tests/golden/<path>: `## title`, then the text inside a ``` fence.
inline std::string case_in(const std::string& path, const std::string& title) {
  const std::string all = text(path);
  const std::string head = "## " + title + "\n```\n";
  const size_t at = all.find(head);
  if (at == std::string::npos)
    throw std::runtime_error("no case '" + title + "' in tests/golden/" + path);
  const size_t begin = at + head.size();
  const size_t end = all.find("\n```", begin);
  return all.substr(begin, end - begin);
}

// The text JAX printed for case `title` of tests/golden/jax_0_11_2/<file> (written by
// scripts/jax_oracle.py).
inline std::string jax_case(const std::string& file, const std::string& title) {
  return case_in("jax_0_11_2/" + file, title);
}

// Case `title` of tests/golden/derived/<file>: a jaxpr derived from JAX's source where no JAX
// was at hand to print it (the file says from which functions); to be replaced by JAX's own
// output (scripts/jax_oracle.py) when a session has it.
inline std::string derived_case(const std::string& file, const std::string& title) {
  return case_in("derived/" + file, title);
}

// The numbers of an array numpy printed ("[[-0.66,  0.34], ...]").
inline std::vector<double> numbers(std::string text) {
  for (char& c : text)
    if (c == '[' || c == ']' || c == ',') c = ' ';
  std::istringstream in(text);
  std::vector<double> out;
  for (double x; in >> x;) out.push_back(x);
  return out;
}
}  // namespace golden

// Declares `var` holding the wild jaxpr `name`, or skips the test case when it is missing.
#define REQUIRE_WILD(var, name)                                            \
  std::string var = golden::wild_jaxpr(name);                              \
  if (var.empty()) {                                                       \
    WARN("reference file " name " not found under CJAX_SHARED_DIR; skip"); \
    return;                                                                \
  }
