// Base64 (RFC 4648, with padding) for the bytes of constants in the JSON form of jaxprs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cjax::json_detail {

std::string base64_encode(std::string_view bytes);
// nullopt on any character outside the alphabet or a bad length/padding.
std::optional<std::string> base64_decode(std::string_view text);
// The decoded size of a well-formed text of this length and padding, without decoding.
size_t base64_decoded_size(std::string_view text);

}  // namespace cjax::json_detail
