#include "io/files.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "ir/errors.h"

namespace cjax::io {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot open '{}'", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void write_file_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError(fmt::format("cannot write '{}'", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw UsageError(fmt::format("cannot write '{}'", path));
}

}  // namespace cjax::io
