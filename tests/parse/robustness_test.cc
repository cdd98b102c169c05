// The parser never crashes or hangs: on prefixes of real jaxprs, byte mutations of them, and
// token soup, it either parses (and the result prints) or throws ParseError.
#include <catch2/catch.hpp>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "ir/print/printer.h"
#include "parse_test_util.h"

using namespace cjax;

namespace {

// "" when `text` parses and prints, or throws ParseError; else what went wrong.
std::string parse_outcome(const std::string& text) {
  try {
    JaxprRef j = parse_jaxpr(text);
    to_string(*j);
  } catch (const ParseError&) {
    return "";
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return "";
}

// Characters that matter to the grammar, and some that do not.
constexpr std::string_view kAlphabet = "{}[]()<>:;,.=_ \n'\"0123456789-+eafxiTFNnl@~\t\\";

std::string mutate(std::string s, std::mt19937& rng) {
  std::uniform_int_distribution<int> edits(1, 3), kind(0, 3), byte(1, 255);
  std::uniform_int_distribution<size_t> alpha(0, kAlphabet.size() - 1);
  for (int e = edits(rng); e > 0; --e) {
    std::uniform_int_distribution<size_t> pos(0, s.size());
    size_t p = pos(rng);
    char c = kind(rng) == 0 ? static_cast<char>(byte(rng)) : kAlphabet[alpha(rng)];
    switch (kind(rng)) {
      case 0:
        if (p < s.size()) s.erase(p, 1);
        break;
      case 1:
        s.insert(p, 1, c);
        break;
      default:
        if (p < s.size()) s[p] = c;
        break;
    }
  }
  return s;
}

}  // namespace

TEST_CASE("parse robustness: every prefix of corpus files", "[parse][robustness]") {
  for (const char* file : {"06_", "21_", "28_", "33_", "36_"}) {
    std::optional<std::string> text = parse_test::read_corpus(file);
    if (!text) {
      WARN("wild-jaxpr corpus not found; skipped");
      return;
    }
    INFO("file " << file);
    for (size_t n = 0; n < text->size(); ++n) {
      std::string outcome = parse_outcome(text->substr(0, n));
      if (!outcome.empty()) FAIL("prefix of length " << n << ": " << outcome);
    }
  }
}

TEST_CASE("parse robustness: random mutations of corpus files", "[parse][robustness]") {
  std::mt19937 rng(20260807);
  int parsed = 0, rejected = 0;
  for (const char* file : {"05_", "08_", "21_", "22_", "28_", "30_", "33_", "34_", "37_"}) {
    std::optional<std::string> text = parse_test::read_corpus(file);
    if (!text) {
      WARN("wild-jaxpr corpus not found; skipped");
      return;
    }
    for (int i = 0; i < 250; ++i) {
      std::string m = mutate(*text, rng);
      std::string outcome = parse_outcome(m);
      if (!outcome.empty()) FAIL("mutation of " << file << ":\n" << m << "\n" << outcome);
      try {
        parse_jaxpr(m);
        ++parsed;
      } catch (const ParseError&) {
        ++rejected;
      }
    }
  }
  // Both outcomes occur: the mutations are neither all harmless nor all fatal.
  CHECK(parsed > 0);
  CHECK(rejected > 0);
}

TEST_CASE("parse robustness: token soup", "[parse][robustness]") {
  const std::vector<std::string> tokens = {
      "{",     "}",   "lambda",   ";",   ".",    "let",   "in",         "(",      ")",     "[",
      "]",     ",",   "=",        ":",   "a",    "b",     "_",          "f32[3]", "f32[]", "i32[]",
      "1",     "2.0", "True",     "nan", "-inf", "[...]", "sin",        "add",    "jit",   "jaxpr=",
      "name=", "x=",  "<lambda>", "'x'", "\n",   " ",     "key<fry>[]", "@x",     "{U:y}", "pjit"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, tokens.size() - 1), len(0, 60);
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    if (i % 2 == 0) s = "{ lambda ; a:f32[3]. let ";
    for (size_t n = len(rng); n > 0; --n) s += tokens[pick(rng)] + (n % 3 ? " " : "");
    std::string outcome = parse_outcome(s);
    if (!outcome.empty()) FAIL(s << "\n" << outcome);
  }
}

TEST_CASE("parse robustness: many typed non-finite literals are read in linear time",
          "[parse][robustness]") {
  // Each `nan:f32[]` operand asks whether `name:type ... =` (the next eqn) follows; that scan
  // once restarted at every operand, so 40,000 of them took 43 s and 100,000 would take minutes.
  std::string text = "{ lambda ; a:f32[]. let b:f32[] = custom ";
  for (int i = 0; i < 100000; ++i) text += "nan:f32[] ";
  text += "in (b,) }";
  auto start = std::chrono::steady_clock::now();
  JaxprRef j = parse_jaxpr(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(j->eqns.at(0).inputs.size() == 100000);
  CHECK(seconds < 30);  // about 0.5 s; the quadratic scan took minutes
}

// A quoted string with a raw control byte is no Python repr (repr escapes it): it is kept as
// text, as an escaped one is, so a param reads the same before and after printing. Found by
// fuzz_jaxpr_parser: psum's axis name with a raw 0x1a parsed, printed as '\x1a...' and then did
// not.
TEST_CASE("parse robustness: a raw control byte in a quoted param reads as its escaped form",
          "[parse][robustness]") {
  auto message = [](const std::string& axis) {
    try {
      parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = psum[axes=(" + axis +
                  ",) axis_index_groups=None] a in (b,) }");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  const std::string raw = message("'\x1arows'"), escaped = message("'\\x1arows'");
  CHECK(raw == escaped);
  CHECK(raw.find("must be a tuple of axis names") != std::string::npos);
  CHECK(message("'rows'") == "parsed");
}
