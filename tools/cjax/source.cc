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
  int n = !src.example.empty() + !src.file.empty() + !src.plugin.empty();
  if (n != 1)
    throw UsageError("give one of --example NAME, --plugin LIB --function NAME, or a FILE");
  if (!src.plugin.empty() && src.function.empty())
    throw UsageError("--plugin needs --function NAME (`cjax examples --plugin LIB` lists them)");
  if (src.plugin.empty() && !src.function.empty()) throw UsageError("--function needs --plugin");
}

std::string describe(const Source& src) {
  if (!src.example.empty()) return "example " + src.example;
  if (!src.plugin.empty()) return "function " + src.function;
  if (src.file.empty()) return "usage";
  return src.file == "-" ? "<stdin>" : src.file;
}

Jaxpr load_jaxpr(const Source& src) {
  check_source(src);
  if (!src.example.empty()) return examples::get(src.example).make_jaxpr();
  if (!src.plugin.empty())
    return plugin::find_function(plugin::load_plugin(src.plugin), src.function).make_jaxpr();
  std::string text = read_input_file(src.file);
  Jaxpr j = looks_like_jaxpr_json(text) ? *jaxpr_from_json(text) : *parse_jaxpr(text);
  verify(j);
  return j;
}

std::vector<runtime::Buffer> default_inputs(const Source& src) {
  if (!src.example.empty()) return examples::get(src.example).default_inputs();
  return {};
}

int guarded(std::ostream& err, const std::string& context, const std::function<int()>& body) {
  auto fail = [&](ExitCode code, const char* what) {
    err << "cjax: " << context << ": " << what << "\n";
    return code;
  };
  try {
    return body();
  } catch (const UsageError& e) {
    return fail(kUsage, e.what());
  } catch (const Error& e) {  // bad input, or input that asks for what cjax does not support
    return fail(kUserError, e.what());
  } catch (const std::exception& e) {
    return fail(kInternal, fmt::format("internal error (please report it): {}", e.what()).c_str());
  }
}

}  // namespace cjax::cli
