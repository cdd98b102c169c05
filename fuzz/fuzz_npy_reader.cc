// libFuzzer target: the .npy reader (io/npy.h). Any bytes must either read or throw a
// cjax::Error; an array that reads must write back to bytes that read as the same array.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "io/npy.h"
#include "ir/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cjax::runtime::Buffer b;
  try {
    b = cjax::io::read_npy(bytes);
  } catch (const cjax::Error&) {
    return 0;  // rejected with a message: fine
  }
  std::string written = cjax::io::write_npy(b);
  cjax::runtime::Buffer again;
  try {
    again = cjax::io::read_npy(written);
  } catch (const cjax::Error& e) {
    std::fprintf(stderr, "fuzz_npy_reader: write_npy's output does not read: %s\n", e.what());
    std::abort();
  }
  if (!again.aval().same_type(b.aval()) || again.nbytes() != b.nbytes() ||
      (b.nbytes() > 0 && std::memcmp(again.data(), b.data(), b.nbytes()) != 0)) {
    std::fprintf(stderr, "fuzz_npy_reader: read -> write -> read changed the array (%s vs %s)\n",
                 b.aval().str_short().c_str(), again.aval().str_short().c_str());
    std::abort();
  }
  return 0;
}
