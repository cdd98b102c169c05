// scan, cond and while print and parse as JAX's text: the real jaxprs of jax-format.md §7.1 and
// the wild-jaxpr corpus parse and re-print, and cjax's own traced control flow round-trips
// through the parser.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"

using namespace cjax;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The ```text blocks of jax-format.md §7.1 that contain `marker`.
std::vector<std::string> section_7_1_blocks(const std::string& marker) {
  std::filesystem::path p = std::filesystem::path(CJAX_SHARED_DIR) / "reference" / "jax-format.md";
  std::vector<std::string> out;
  if (!std::filesystem::exists(p)) return out;
  std::string doc = read(p);
  size_t start = doc.find("### 7.1");
  size_t end = doc.find("\n## ", start);
  std::string sec = doc.substr(start, end - start);
  for (size_t pos = 0; (pos = sec.find("```text\n", pos)) != std::string::npos;) {
    size_t body = pos + 8, close = sec.find("\n```", body);
    std::string block = sec.substr(body, close - body);
    if (block.find(marker) != std::string::npos) out.push_back(block);
    pos = close + 4;
  }
  return out;
}

std::string reprint(const std::string& text) {
  return to_string(*parse_jaxpr(text));
}

// The four differences between the jax 0.4.30 text of §7.1 and the current format cjax prints
// (tests/parse/corpus_test.cc: older eras re-print in the current format): literals carry their
// type (`1.0:f32[]`), cond no longer has `linear`, a scalar broadcast_in_dim prints without
// params, and unused binders no longer get a `_` suffix (`m_`). `current_to_0_4_30` undoes the
// first on cjax's printout; `drop_era_params` the others on JAX's.
const std::regex& typed_literal() {
  static const std::regex r(
      R"(\b(-?[0-9][0-9.e+\-]*|True|False|inf|nan):(f|i|u|bf|bool)[0-9]*\[\])");
  return r;
}

std::string current_to_0_4_30(const std::string& s) {
  return std::regex_replace(s, typed_literal(), "$1");
}

std::string drop_era_params(const std::string& s) {
  static const std::regex bcast(
      R"(broadcast_in_dim\[broadcast_dimensions=\(\) shape=\([0-9, ]*\)\])");
  static const std::regex unused_suffix(R"(\b([a-z]+)_:)");  // jax 0.4.30 marked unused binders
  std::string t =
      std::regex_replace(std::regex_replace(s, bcast, "broadcast_in_dim"), unused_suffix, "$1:");
  std::istringstream in(t);
  std::string line, prev, out;
  while (std::getline(in, line)) {
    auto trim = [](const std::string& x) {
      return x.substr(x.find_first_not_of(' ') == std::string::npos ? 0 : x.find_first_not_of(' '));
    };
    bool cond_linear = trim(line).rfind("linear=(", 0) == 0 && trim(prev) == ")";
    if (!cond_linear) out += (out.empty() ? "" : "\n") + line;
    prev = line;
  }
  return out;
}

}  // namespace

TEST_CASE("print/parse: the scan, cond and while jaxprs of jax-format.md 7.1") {
  std::vector<std::string> blocks;
  for (const char* m : {"scan[", "cond[", "while["})
    for (std::string& b : section_7_1_blocks(m)) blocks.push_back(std::move(b));
  if (blocks.empty()) {
    WARN("jax-format.md not found under " << CJAX_SHARED_DIR << "; skipped");
    return;
  }
  CHECK(blocks.size() >= 5);
  for (const std::string& b : blocks) {
    INFO(b);
    std::string once = reprint(b);
    if (std::regex_search(b, typed_literal()))
      CHECK(once == b);  // current-format text: byte for byte
    else
      CHECK(current_to_0_4_30(once) == drop_era_params(b));
    CHECK(reprint(once) == once);  // the current-format text round-trips byte for byte
    CHECK_NOTHROW(verify(*parse_jaxpr(b)));
  }
}
