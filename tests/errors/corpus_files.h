// The files of a test corpus (fuzz seeds, goldens, JAX's jaxprs), sorted, and their bytes.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/run_cli.h"

namespace cjax::test {

// The regular files in `dir` whose names end in `ext` (any when empty), sorted; none when `dir`
// does not exist (../shared is missing in a user's clone).
inline std::vector<std::string> files_in(const std::string& dir, const std::string& ext = "") {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && (ext.empty() || e.path().extension() == ext))
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

using cli_test::slurp;

}  // namespace cjax::test
