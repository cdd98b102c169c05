// CJAX_PERF_MAP=1 (compiler/cpu/perf_map.h): a fresh compile appends its functions to
// /tmp/perf-<pid>.map in perf's format, so `perf report` names compiled code; the object cache
// is bypassed meanwhile (loaded code has no names to give).
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "compiler/cpu/executable.h"
#include "ir/parse/parser.h"

namespace cjax {
namespace {

TEST_CASE("CJAX_PERF_MAP names each compiled function for perf, start and size in hex") {
  const std::string map = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::filesystem::remove(map);
  JaxprRef j =
      parse_jaxpr("{ lambda ; a:f32[64]. let b:f32[64] = sin a; c:f32[64] = mul b b in (c,) }");
  ::setenv("CJAX_PERF_MAP", "1", 1);
  auto exe = lower::compile(*j, "perf_map_test");
  ::unsetenv("CJAX_PERF_MAP");
  CHECK_FALSE(exe->compile_stats().from_cache);
  std::ifstream in(map);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  INFO(text.str());
  const std::regex line(R"(^[0-9a-f]+ [0-9a-f]+ cjax:perf_map_test:\S+$)");
  size_t lines = 0;
  std::string l;
  while (std::getline(text, l)) {
    CHECK(std::regex_match(l, line));
    ++lines;
  }
  CHECK(lines >= 1);
  CHECK(text.str().find(" cjax:perf_map_test:main\n") != std::string::npos);
  std::filesystem::remove(map);
}

}  // namespace
}  // namespace cjax
