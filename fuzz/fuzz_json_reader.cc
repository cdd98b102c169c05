// libFuzzer target: the JSON IR reader (ir/json/json.h). Any text must either read or throw a
// cjax::Error; a jaxpr that reads must write back to JSON that reads and prints the same.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ir/errors.h"
#include "ir/json/json.h"
#include "ir/print/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  cjax::JaxprRef j;
  try {
    j = cjax::jaxpr_from_json(text);
  } catch (const cjax::Error&) {
    return 0;  // rejected with a message: fine
  }
  std::string printed, reprinted;
  try {
    printed = cjax::to_string(*j);
    reprinted = cjax::to_string(*cjax::jaxpr_from_json(cjax::jaxpr_to_json(*j)));
  } catch (const cjax::Error& e) {
    std::fprintf(stderr, "fuzz_json_reader: a jaxpr read from JSON fails to print or re-read: %s\n",
                 e.what());
    std::abort();
  }
  if (printed != reprinted) {
    std::fprintf(stderr,
                 "fuzz_json_reader: JSON -> jaxpr -> JSON -> jaxpr changed it:\n%s\n---\n%s\n",
                 printed.c_str(), reprinted.c_str());
    std::abort();
  }
  return 0;
}
