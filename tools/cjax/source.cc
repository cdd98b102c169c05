#include "tools/cjax/source.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "examples/registry.h"
#include "ir/errors.h"
#include "ir/json/json.h"
#include "ir/parse/parser.h"
#include "ir/rules/verify.h"
#include "plugin/loader.h"
#include "tools/cjax/error_report.h"
#include "tools/cjax/exit_codes.h"

namespace cjax::cli {

std::string read_input_file(const std::string& path) {
  std::stringstream buf;
  if (path == "-") {
    buf << std::cin.rdbuf();
    return buf.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot open '{}'", path));
  buf << in.rdbuf();
  return buf.str();
}

void check_source(const Source& src) {
  if (src.plugin.empty() && !src.function.empty()) throw UsageError("--function needs --plugin");
  int n = !src.example.empty() + !src.file.empty() + !src.plugin.empty();
  if (n != 1)
    throw UsageError("give one of --example NAME, --plugin LIB --function NAME, or a FILE");
  if (!src.plugin.empty() && src.function.empty())
    throw UsageError("--plugin needs --function NAME (`cjax examples --plugin LIB` lists them)");
}

std::string describe(const Source& src) {
  if (!src.example.empty()) return "example " + src.example;
  if (!src.plugin.empty()) return "function " + src.function;
  if (src.file.empty()) return "usage";
  return src.file == "-" ? "<stdin>" : src.file;
}

Jaxpr load_jaxpr(const Source& src) {
  check_source(src);
  Jaxpr j;
  if (!src.example.empty()) {
    j = examples::get(src.example).make_jaxpr();
  } else if (!src.plugin.empty()) {
    j = plugin::find_function(plugin::load_plugin(src.plugin), src.function).make_jaxpr();
  } else {
    std::string text = read_input_file(src.file);
    note_input_text(text);  // for --verbose: a parse error's line with a caret
    j = looks_like_jaxpr_json(text) ? *jaxpr_from_json(text) : *parse_jaxpr(text);
    note_program(j);
    verify(j);
    return j;
  }
  note_program(j);  // for --verbose: what a later error was working on
  return j;
}

std::vector<runtime::Buffer> default_inputs(const Source& src) {
  if (!src.example.empty()) return examples::get(src.example).default_inputs();
  return {};
}

int guarded(std::ostream& err, const std::string& context, const std::function<int()>& body) {
  try {
    return body();
  } catch (...) {
    return report_current_exception(err, context);
  }
}

}  // namespace cjax::cli
