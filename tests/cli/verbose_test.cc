// Errors on the command line: one line `cjax: <where>: <message>` by default, the same line
// followed by the detail with --verbose (-v, before or after the subcommand), and the same exit
// code either way (docs/cli.md, docs/errors.md).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_cli.h"

using cli_test::run_cli;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs `args` plain and with --verbose; both fail with `code` and print nothing on stdout; the
// plain error is one line, and the verbose one starts with that line. Returns the verbose lines.
std::vector<std::string> both_forms(const std::string& args, const std::string& stdin_text,
                                    int code) {
  auto plain = run_cli(args, stdin_text);
  auto verbose = run_cli(args + " --verbose", stdin_text);
  INFO(plain.err << verbose.err);
  CHECK(plain.code == code);
  CHECK(verbose.code == code);
  CHECK(plain.out.empty());
  CHECK(verbose.out.empty());
  REQUIRE(lines_of(plain.err).size() == 1);
  CHECK(plain.err.rfind("cjax: ", 0) == 0);
  std::vector<std::string> v = lines_of(verbose.err);
  REQUIRE(v.size() > 1);
  CHECK(v[0] + "\n" == plain.err);
  return v;
}

const char* const kBadText =
    "{ lambda ; a:f32[3]. let\n"
    "    b:f32[3] = sin a\n"
    "  in (b, }";

}  // namespace

TEST_CASE("cjax --verbose: a parse error shows its type and the input line with a caret") {
  std::vector<std::string> v = both_forms("jaxpr -", kBadText, 1);
  CHECK(v ==
        std::vector<std::string>{"cjax: <stdin>: 3:10: expected a variable or a literal, got '}'",
                                 "  error type: cjax::ParseError",
                                 "  at line 3, column 10:", "      in (b, }", "             ^"});
  // -v before the subcommand is the same flag.
  auto early = run_cli("-v jaxpr -", kBadText);
  CHECK(early.code == 1);
  CHECK(lines_of(early.err) == v);
}

TEST_CASE("cjax --verbose: the caret points into JSON too, and keeps tabs") {
  std::vector<std::string> v = both_forms("jaxpr -", "{\"format\":\n\t]", 1);
  CHECK(v[1] == "  error type: cjax::ParseError");
  REQUIRE(v.size() == 5);
  CHECK(v[2].rfind("  at line 2, column 2:", 0) == 0);
  CHECK(v[3] == "    \t]");
  CHECK(v[4] == "    \t^");
}

TEST_CASE("cjax --verbose: an unsupported primitive shows the program it was in") {
  std::string text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = my_op[k=1] a\n"
      "    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
      "  in (c,) }";
  std::vector<std::string> v = both_forms("grad -", text, 1);
  CHECK(v[0] == "cjax: <stdin>: jvp: no differentiation rule for 'my_op' (from unknown)");
  CHECK(v[1] == "  error type: cjax::UnsupportedError");
  CHECK(v[2] == "  the program:");
  // The program as cjax read it, indented by four.
  std::string program;
  for (size_t i = 3; i < v.size(); ++i) {
    REQUIRE(v[i].rfind("    ", 0) == 0);
    program += v[i].substr(4) + "\n";
  }
  CHECK(program == text + std::string("\n"));
}

TEST_CASE("cjax --verbose: usage errors keep exit code 2 and say so") {
  std::vector<std::string> v = both_forms("residuals --example tutorial/f --arg-names a", "", 2);
  CHECK(v[0] == "cjax: example tutorial/f: --arg-names gives 1 names for 4 arguments");
  CHECK(v[1] == "  error type: cjax::UsageError");
  CHECK(v[2] == "  the program:");
  CHECK(v[3] == "    { lambda ; a:f32[5,4] b:f32[6,5] c:f32[7,6] d:f32[4]. let");
  // A mistake on the command line alone is found before the program is read.
  v = both_forms("residuals --example tutorial/f --policy bogus", "", 2);
  CHECK(v.size() == 2);
  CHECK(v[0].rfind("cjax: residuals: unknown policy 'bogus'", 0) == 0);
  CHECK(v[1] == "  error type: cjax::UsageError");
  // A file that cannot be opened: nothing was read, so there is no program to show.
  v = both_forms("jaxpr no_such_file.jaxpr", "", 2);
  CHECK(v == std::vector<std::string>{"cjax: no_such_file.jaxpr: cannot open 'no_such_file.jaxpr'",
                                      "  error type: cjax::UsageError"});
}

TEST_CASE("cjax --verbose: a long program is cut after 40 lines") {
  std::vector<std::string> v =
      both_forms("residuals --example tutorial/recursive16 --arg-names a,b", "", 2);
  // The one line, the type, "the program:", 40 lines of it, and how many were left out.
  REQUIRE(v.size() == 3 + 40 + 1);
  auto full = run_cli("jaxpr --example tutorial/recursive16");
  size_t total = lines_of(full.out).size();
  REQUIRE(total > 40);
  CHECK(v.back() == "    ... (" + std::to_string(total - 40) + " more lines)");
}

TEST_CASE("cjax --verbose changes nothing when the command succeeds") {
  auto plain = run_cli("jaxpr --example tutorial/sin_sin");
  auto verbose = run_cli("jaxpr --example tutorial/sin_sin --verbose");
  CHECK(plain.code == 0);
  CHECK(verbose.code == 0);
  CHECK(verbose.out == plain.out);
  CHECK(verbose.err.empty());
}

TEST_CASE("cjax --verbose: errors of the option parser are unchanged") {
  auto r = run_cli("grad --example tutorial/f --bogus --verbose");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--bogus") != std::string::npos);
}
