// Helpers for the parser tests: reading the wild-jaxpr corpus (skipped when absent) and checking
// the message and position of a ParseError.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "ir/errors.h"
#include "ir/parse/parser.h"

namespace cjax::parse_test {

inline std::filesystem::path corpus_dir() {
  return std::filesystem::path(CJAX_SHARED_DIR) / "reference" / "wild-jaxprs";
}

// The corpus file whose name starts with `prefix` ("36_"), or nullopt when the corpus is absent.
inline std::optional<std::string> read_corpus(const std::string& prefix) {
  std::error_code ec;
  if (!std::filesystem::is_directory(corpus_dir(), ec)) return std::nullopt;
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir())) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".jaxpr") {
      std::ifstream f(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      return ss.str();
    }
  }
  return std::nullopt;
}

// "LINE:COL: message" of the ParseError parsing `text` throws; "no error" when it parses, and the
// exception's type and text for any other exception.
inline std::string parse_error(const std::string& text) {
  try {
    parse_jaxpr(text);
  } catch (const ParseError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a ParseError: ") + e.what();
  }
  return "no error";
}

}  // namespace cjax::parse_test
