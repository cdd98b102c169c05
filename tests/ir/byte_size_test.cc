// Sizes in bytes as people write them (ir/byte_size.h): what memory_budget, `cjax memory
// --budgets` and CJAX_MEMORY_LIMIT read, and how the memory report prints them.
#include "ir/byte_size.h"

#include <catch2/catch.hpp>

namespace cjax {
namespace {

TEST_CASE("memory: sizes are parsed and printed") {
  CHECK(parse_byte_size("24MiB") == size_t{24} << 20);
  CHECK(parse_byte_size("1.5 KiB") == 1536u);
  CHECK(parse_byte_size("100kB") == 100000u);
  CHECK(parse_byte_size("4096") == 4096u);
  CHECK(parse_byte_size("2GB") == 2000000000u);
  CHECK_FALSE(parse_byte_size("lots"));
  CHECK_FALSE(parse_byte_size("12 parsecs"));
  CHECK_FALSE(parse_byte_size(""));
  CHECK(format_byte_size(96) == "96 B");
  CHECK(format_byte_size(1536) == "1.5 KiB");
  CHECK(format_byte_size(24u << 20) == "24.0 MiB");
  CHECK(format_byte_size(size_t{3} << 30) == "3.00 GiB");
  CHECK(format_byte_size(size_t{5} << 40) == "5.00 TiB");
  CHECK(format_byte_size(size_t{7} << 50) == "7.00 PiB");
}

}  // namespace
}  // namespace cjax
