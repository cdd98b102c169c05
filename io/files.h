// Whole files as bytes, for the readers and writers of io/ (errors name the path).
#pragma once

#include <string>
#include <string_view>

namespace cjax::io {

// Throws cjax::UsageError "cannot open '<path>'".
std::string read_file_bytes(const std::string& path);
// Throws cjax::UsageError "cannot write '<path>'".
void write_file_bytes(const std::string& path, std::string_view bytes);

}  // namespace cjax::io
