// Every `$ cjax ...` command shown in a ```sh block of docs/*.md is run, and its output must be
// what the doc shows after it (up to the next `$` line or the end of the block). A line `…` in
// the doc stands for any number of lines. Run with CJAX_UPDATE_DOCS=1 to rewrite the docs with
// the real outputs (blocks with `…` are left alone).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/cli/run_cli.h"

namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `want` may contain "…" lines, each matching any run of lines.
bool matches(const std::vector<std::string>& want, size_t wi, const std::vector<std::string>& got,
             size_t gi) {
  if (wi == want.size()) return gi == got.size();
  if (want[wi] == "…") {
    for (size_t k = gi; k <= got.size(); ++k)
      if (matches(want, wi + 1, got, k)) return true;
    return false;
  }
  return gi < got.size() && want[wi] == got[gi] && matches(want, wi + 1, got, gi + 1);
}

struct Command {
  size_t line;  // index of the `$ cjax` line
  std::string args, stdin_text;
  std::vector<std::string> expected;
};

// Commands in ```sh blocks. `echo '...' | cjax ...` feeds the quoted text on stdin.
std::vector<Command> commands_in(const std::vector<std::string>& lines) {
  std::vector<Command> out;
  bool in_sh = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("```", 0) == 0) {
      in_sh = !in_sh && l == "```sh";
      continue;
    }
    if (!in_sh || l.rfind("$ ", 0) != 0) continue;
    Command c{i, l.substr(2), "", {}};
    if (c.args.rfind("echo '", 0) == 0) {
      size_t close = c.args.find("' | cjax ");
      if (close == std::string::npos) continue;
      c.stdin_text = c.args.substr(6, close - 6);
      c.args = c.args.substr(close + 9);
    } else if (c.args.rfind("cjax ", 0) == 0) {
      c.args = c.args.substr(5);
    } else {
      continue;
    }
    for (size_t j = i + 1;
         j < lines.size() && lines[j].rfind("$ ", 0) != 0 && lines[j].rfind("```", 0) != 0; ++j)
      c.expected.push_back(lines[j]);
    while (!c.expected.empty() && c.expected.back().empty()) c.expected.pop_back();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

// A ```cpp block whose first line is `// <path>` must appear verbatim in that source file. Every
// block of README.md must name one (tests/readme/readme_test.cc compiles the README's C++).
TEST_CASE("the C++ shown in docs/ and README.md is the code of the examples") {
  namespace fs = std::filesystem;
  std::vector<fs::path> pages = {fs::path(CJAX_SOURCE_DIR) / "README.md"};
  for (const auto& entry : fs::directory_iterator(fs::path(CJAX_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  int checked = 0, readme_blocks = 0;
  for (const fs::path& page : pages) {
    bool readme = page.filename() == "README.md";
    std::vector<std::string> lines = split_lines(cli_test::slurp(page.string()));
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      if (lines[i] != "```cpp") continue;
      INFO(page.filename().string() << ":" << i + 1);
      if (readme) {
        CHECK(lines[i + 1].rfind("// ", 0) == 0);  // every README block is compiled
        ++readme_blocks;
      }
      if (lines[i + 1].rfind("// ", 0) != 0) continue;
      std::string file = lines[i + 1].substr(3), snippet;
      size_t j = i + 2;
      for (; j < lines.size() && lines[j] != "```"; ++j) snippet += lines[j] + "\n";
      INFO("snippet of " << file);
      std::string source = cli_test::slurp((fs::path(CJAX_SOURCE_DIR) / file).string());
      CHECK(!source.empty());
      CHECK(source.find(snippet) != std::string::npos);
      ++checked;
      i = j;
    }
  }
  CHECK(checked > 0);
  CHECK(readme_blocks > 0);
}

TEST_CASE("the cjax commands shown in docs/ print what the docs say") {
  namespace fs = std::filesystem;
  bool update = std::getenv("CJAX_UPDATE_DOCS") != nullptr;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(CJAX_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::vector<std::string> lines = split_lines(cli_test::slurp(entry.path().string()));
    std::vector<Command> cmds = commands_in(lines);
    // Rewrite from the last command up, so earlier line numbers stay valid.
    for (auto it = cmds.rbegin(); it != cmds.rend(); ++it) {
      auto r = cli_test::run_cli(it->args, it->stdin_text);
      std::vector<std::string> got = split_lines(r.out + r.err);
      INFO(entry.path().filename().string() << ":" << it->line + 1 << ": $ cjax " << it->args);
      bool elided = std::find(it->expected.begin(), it->expected.end(), "…") != it->expected.end();
      if (update && !elided) {
        auto first = lines.begin() + static_cast<std::ptrdiff_t>(it->line + 1);
        lines.erase(first, first + static_cast<std::ptrdiff_t>(it->expected.size()));
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(it->line + 1), got.begin(),
                     got.end());
        continue;
      }
      CHECK(matches(it->expected, 0, got, 0));
      ++checked;
    }
    if (update) {
      std::ofstream o(entry.path());
      for (const auto& l : lines) o << l << "\n";
    }
  }
  if (!update) CHECK(checked > 0);
}
