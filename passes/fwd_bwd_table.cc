#include "passes/fwd_bwd_table.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace cjax {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void rstrip(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

}  // namespace

std::string fwd_bwd_columns(const std::string& fwd, const std::string& bwd) {
  const std::string kFwdTitle = "forward computation:", kBwdTitle = "backward computation:";
  std::vector<std::string> left = lines_of(fwd), right = lines_of(bwd);
  size_t width = kFwdTitle.size();
  for (const auto& l : left) width = std::max(width, l.size());
  // Each cell has 2 columns of padding on both sides; rows after the first start with a blank
  // line (top padding 1).
  auto row = [&](const std::string& a, const std::string& b) {
    std::string line = "  " + a + std::string(width - a.size() + 4, ' ') + b;
    rstrip(line);
    return line + "\n";
  };
  std::string out = row(kFwdTitle, kBwdTitle) + "\n";
  for (size_t i = 0; i < std::max(left.size(), right.size()); ++i)
    out += row(i < left.size() ? left[i] : "", i < right.size() ? right[i] : "");
  return out;
}

std::string fwd_bwd_stacked(const std::string& fwd, const std::string& bwd) {
  return "forward computation:\n" + fwd + "\n\nbackward computation:\n" + bwd + "\n";
}

}  // namespace cjax
