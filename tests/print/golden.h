// Golden comparison: the printer's text must equal the golden byte for byte. When the golden is
// a verbatim copy of a file in the shared wild-jaxpr corpus, the file (when present) is compared
// too, so a typo in a golden cannot make a test pass.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace cjax::test {

inline std::optional<std::string> read_wild_jaxpr(const std::string& file) {
  std::filesystem::path p =
      std::filesystem::path(CJAX_SHARED_DIR) / "reference" / "wild-jaxprs" / file;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (!s.empty() && s.back() == '\n') s.pop_back();  // each file ends with one newline
  return s;
}

inline void check_golden(const std::string& got, const std::string& golden,
                         const std::string& wild_file = "") {
  CHECK(got == golden);
  if (wild_file.empty()) return;
  if (auto w = read_wild_jaxpr(wild_file)) {
    CHECK(*w == golden);
  } else {
    WARN("shared corpus file " << wild_file << " not found; compared with the inline golden only");
  }
}

}  // namespace cjax::test
