// Sizes in bytes as people write them: parsed from "24MiB", "1.5 GiB", "100kB", "4096", and
// printed as "1.5 KiB". Shared by memory_budget, `cjax memory --budgets` and CJAX_MEMORY_LIMIT.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cjax {

// "24MiB", "1.5 GiB", "512KiB", "100kB", "2GB", "4096" or "4096B" -> bytes (binary units KiB,
// MiB, GiB and K, M, G; decimal kB, MB, GB). nullopt for anything else: empty text, a negative
// or malformed number, an unknown unit, more than 10^18 bytes.
std::optional<size_t> parse_byte_size(const std::string& text);

// 96 -> "96 B", 1536 -> "1.5 KiB", then MiB with one decimal, and GiB, TiB and PiB with two.
std::string format_byte_size(size_t bytes);

}  // namespace cjax
