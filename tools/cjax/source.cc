#include "tools/cjax/source.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "examples/registry.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "ir/rules/verify.h"
#include "tools/cjax/exit_codes.h"

namespace cjax::cli {

namespace {

std::string read_text(const std::string& path) {
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

}  // namespace

std::string describe(const Source& src) {
  if (!src.example.empty()) return "example " + src.example;
  return src.file == "-" ? "<stdin>" : src.file;
}

Jaxpr load_jaxpr(const Source& src) {
  if (!src.example.empty()) return examples::get(src.example).make_jaxpr();
  Jaxpr j = *parse_jaxpr(read_text(src.file));
  verify(j);
  return j;
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
  } catch (const UnsupportedError& e) {
    return fail(kUnsupported, e.what());
  } catch (const Error& e) {  // parse, verify and type errors: the input is wrong
    return fail(kBadInput, e.what());
  } catch (const std::exception& e) {
    return fail(kInternal, e.what());
  }
}

}  // namespace cjax::cli
