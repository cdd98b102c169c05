// libFuzzer target: the jaxpr text parser. Any input must either parse or throw a cjax::Error
// (ParseError with line:col); anything else (a crash, a sanitizer report, another exception, a
// hang) is a bug. An input that parses must also verify, print, and print → parse → print must
// give the same text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& a, const std::string& b = "") {
  std::fprintf(stderr, "fuzz_jaxpr_parser: %s\n--- first ---\n%s\n--- second ---\n%s\n", what,
               a.c_str(), b.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Large inputs only slow the search down; the parser is linear in its input.
  if (size > 64 * 1024) return -1;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  cjax::JaxprRef jaxpr;
  try {
    jaxpr = cjax::parse_jaxpr(text);
  } catch (const cjax::Error&) {
    return 0;  // rejected with a message: fine
  }
  std::string printed;
  try {
    cjax::verify(*jaxpr);
    printed = cjax::to_string(*jaxpr);
  } catch (const cjax::Error& e) {
    fail("a parsed jaxpr failed to verify or print", std::string(text), e.what());
  }
  std::string reprinted;
  try {
    reprinted = cjax::to_string(*cjax::parse_jaxpr(printed));
  } catch (const cjax::Error& e) {
    fail("the printout of a parsed jaxpr does not parse", printed, e.what());
  }
  if (reprinted != printed) fail("print -> parse -> print changed the text", printed, reprinted);
  return 0;
}
