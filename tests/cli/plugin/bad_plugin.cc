// A plugin that breaks the contract of plugin/plugin_abi.h in the one way the environment
// variable CJAX_TEST_PLUGIN_FAULT names (unset: it is a valid plugin), for the loader's checks in
// tests/cli/plugin_test.cc. Written without plugin.h's macros, which cannot make these faults.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/limits.h"
#include "plugin/plugin_abi.h"

namespace {

using cjax::plugin::Function;

std::string_view fault() {
  const char* f = std::getenv("CJAX_TEST_PLUGIN_FAULT");
  return f ? f : "";
}

Function function(std::string name, std::vector<std::string> specs = {"f32[3]"},
                  std::vector<std::string> names = {"x"}) {
  return Function{std::move(name), "", std::move(specs), std::move(names),
                  [] { return cjax::Jaxpr(); }};
}

// "f32[1,1,...]" with `rank` dimensions.
std::string rank_spec(int64_t rank) {
  std::string s = "f32[1";
  for (int64_t i = 1; i < rank; ++i) s += ",1";
  return s + "]";
}

std::vector<Function> make_functions() {
  std::string_view f = fault();
  std::vector<Function> fs = {function("ok")};
  if (f == "empty_name") fs.push_back(function(""));
  if (f == "spaced_name") fs.push_back(function("my loss"));
  if (f == "duplicate_name") fs.push_back(function("ok"));
  if (f == "multiline_description") fs[0].description = "one\ntwo";
  if (f == "no_make_jaxpr") fs[0].make_jaxpr = nullptr;
  if (f == "rank_spec") fs.push_back(function("r", {rank_spec(cjax::kMaxRank + 1)}));
  if (f == "huge_spec") fs.push_back(function("h", {"f32[999999999999,999999999999]"}));
  if (f == "garbage_spec") fs.push_back(function("g", {"f32[3\n]"}));
  if (f == "names_mismatch") fs.push_back(function("n", {"f32[3]"}, {"x", "y"}));
  if (f == "empty_arg_name") fs.push_back(function("e", {"f32[3]"}, {""}));
  return fs;
}

}  // namespace

extern "C" {
[[gnu::used, gnu::visibility("default")]] const char* cjax_plugin_abi() {
  return fault() == "null_abi" ? nullptr : CJAX_PLUGIN_ABI;
}
[[gnu::used, gnu::visibility("default")]] const std::vector<Function>* cjax_plugin_functions() {
  if (fault() == "null_functions") return nullptr;
  if (fault() == "throwing_functions") throw std::runtime_error("no functions today");
  static const std::vector<Function> functions = make_functions();
  return &functions;
}
}
