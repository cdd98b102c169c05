// No abort, assert or uncaught exception reaches a user: every real jaxpr (../shared/reference),
// golden file and fuzzer-found input (fuzz/seeds/) goes through the CLI's program-consuming
// subcommands, which must exit 0 or 1, never 3 (internal error) or by a signal, and on failure
// print exactly one `cjax: ` line. The inputs found by fuzzing also go through the readers'
// contracts directly (the regression tests of the fuzz targets).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "ir/errors.h"
#include "ir/json/json.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "tests/cli/run_cli.h"
#include "tests/errors/corpus_files.h"

namespace {

using cjax::test::files_in;
using cjax::test::slurp;

const std::string kSeeds = std::string(CJAX_SOURCE_DIR) + "/fuzz/seeds/";

}  // namespace

TEST_CASE("robustness: the CLI never fails internally on real and fuzzed jaxprs") {
  std::vector<std::string> inputs = files_in(kSeeds + "fuzz_jaxpr_parser");
  for (const std::string& f : files_in(std::string(CJAX_SOURCE_DIR) + "/tests/golden"))
    if (f.ends_with(".jaxpr")) inputs.push_back(f);
  std::vector<std::string> wild = files_in(std::string(CJAX_SHARED_DIR) + "/reference/wild-jaxprs");
  if (wild.empty())
    WARN("no ../shared/reference/wild-jaxprs: checking the repository's inputs only");
  for (const std::string& f : wild)
    if (f.ends_with(".jaxpr") && f.find("_large") == std::string::npos) inputs.push_back(f);
  REQUIRE(inputs.size() >= 4);
  for (const std::string& f : inputs) {
    for (const char* sub : {"jaxpr", "residuals", "grad"}) {
      auto r = cli_test::run_cli(std::string(sub) + " " + f);
      INFO(sub << " " << f << "\n" << r.err);
      CHECK((r.code == 0 || r.code == 1));
      if (r.code != 0) {
        CHECK(r.err.rfind("cjax: ", 0) == 0);
        CHECK(r.err.find('\n') == r.err.size() - 1);
      }
    }
  }
}

TEST_CASE("robustness: fuzzer-found jaxpr texts parse or fail with a ParseError, and round-trip") {
  std::vector<std::string> seeds = files_in(kSeeds + "fuzz_jaxpr_parser");
  REQUIRE(!seeds.empty());
  for (const std::string& f : seeds) {
    INFO(f);
    std::string text = slurp(f);
    cjax::JaxprRef j;
    try {
      j = cjax::parse_jaxpr(text);
    } catch (const cjax::ParseError& e) {
      CHECK(e.line >= 1);
      continue;
    }
    CHECK_NOTHROW(cjax::verify(*j));
    std::string printed = cjax::to_string(*j);
    CHECK(cjax::to_string(*cjax::parse_jaxpr(printed)) == printed);
  }
}

TEST_CASE("robustness: fuzzer-found .npy and JSON inputs read or fail with a cjax::Error") {
  for (const std::string& f : files_in(kSeeds + "fuzz_npy_reader")) {
    INFO(f);
    try {
      cjax::runtime::Buffer b = cjax::io::read_npy(slurp(f));
      cjax::runtime::Buffer again = cjax::io::read_npy(cjax::io::write_npy(b));
      CHECK(again.aval().same_type(b.aval()));
      CHECK((b.nbytes() == 0 || std::memcmp(again.data(), b.data(), b.nbytes()) == 0));
    } catch (const cjax::Error&) {
    }
  }
  for (const std::string& f : files_in(kSeeds + "fuzz_json_reader")) {
    INFO(f);
    try {
      cjax::JaxprRef j = cjax::jaxpr_from_json(slurp(f));
      CHECK(cjax::to_string(*cjax::jaxpr_from_json(cjax::jaxpr_to_json(*j))) ==
            cjax::to_string(*j));
    } catch (const cjax::Error&) {
    }
  }
}

// The parser bugs the fuzzer found, each as the smallest text that shows it.
TEST_CASE("robustness: an eqn without outputs prints and parses back (fuzz)") {
  // JAX prints an eqn without outputs as just `prim[params] args`.
  std::string text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = sin a\n"
      "    debug_callback[callback=f effect=Debug] b\n"
      "  in (b,) }";
  cjax::JaxprRef j = cjax::parse_jaxpr(text);
  REQUIRE(j->eqns.size() == 2);
  CHECK(j->eqns[1].outputs.empty());
  CHECK(j->eqns[1].inputs.size() == 1);
  CHECK(cjax::to_string(*j) == text);
  // The older `= prim` spelling still reads; without params it would print as a bare name, which
  // cannot be told from an operand, so it is rejected.
  CHECK(cjax::parse_jaxpr("{ lambda ; a:f32[3]. let = debug_callback[callback=f] a in (a,) }")
            ->eqns[0]
            .outputs.empty());
  try {
    cjax::parse_jaxpr("{ lambda ; a:f32[3]. let = foo a in (a,) }");
    FAIL("no ParseError");
  } catch (const cjax::ParseError& e) {
    CHECK(std::string(e.what()) == "1:28: equation 'foo' has neither outputs nor params");
  }
  // After an eqn without operands, one without outputs whose name is hyphenated (`scatter-add`)
  // starts an eqn too: its first word is no operand of the eqn before (fuzz).
  const std::string hyphen =
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = iota_like \n"
      "    debug-print[x=1] a\n"
      "  in (b,) }";
  cjax::JaxprRef h = cjax::parse_jaxpr(hyphen);
  REQUIRE(h->eqns.size() == 2);
  CHECK(h->eqns[0].inputs.empty());
  CHECK(h->eqns[1].prim->name == "debug-print");
  CHECK(cjax::to_string(*cjax::parse_jaxpr(cjax::to_string(*h))) == cjax::to_string(*h));
}

TEST_CASE("robustness: a shared jaxpr of a function named with a quote reads back (fuzz)") {
  // `<lambda>'` made the preamble `let lambda>' = ...`, whose reference `jaxpr=lambda>'` read as
  // the start of a quoted string; such a name becomes `jaxpr`.
  const std::string text =
      "let lambda = { lambda ; a:f32[1]. let b:f32[1] = integer_pow[y=2] a in (b,) } in\n"
      "{ lambda ; c:f32[1]. let\n"
      "    e:f32[1] = jit[name=<lambda>' jaxpr=lambda] c\n"
      "    f:f32[1] = jit[name=<lambda> jaxpr=lambda] c\n"
      "    d:f32[1] = add e f\n"
      "  in (d,) }";
  const std::string printed = cjax::to_string(*cjax::parse_jaxpr(text));
  INFO(printed);
  CHECK(printed.rfind("let jaxpr = ", 0) == 0);
  CHECK(cjax::to_string(*cjax::parse_jaxpr(printed)) == printed);
}

TEST_CASE("robustness: a param value may not run past its line (fuzz)") {
  // A mangled key (`out_axe$=`) made the previous value swallow the next lines; as a `name`, it
  // then printed as a `let` preamble name with a newline in it.
  std::string text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = pjit[\n"
      "      name=f\n"
      "      out_axe$=(0,)\n"
      "      jaxpr={ lambda ; c:f32[3]. let  in (c,) }\n"
      "    ] a\n"
      "  in (b,) }";
  try {
    cjax::parse_jaxpr(text);
    FAIL("no ParseError");
  } catch (const cjax::ParseError& e) {
    CHECK(std::string(e.what()) ==
          "3:13: the value of 'name=' in 'pjit' runs past the end of its line");
  }
}

TEST_CASE("robustness: brackets in a param value must balance (fuzz)") {
  // A '}' closing a '(' used to be accepted, and then a `let` preamble holding it ended early.
  std::string text =
      "{ lambda ; a:f32[3]. let b:f32[3] = my_op[axes=FrozenDict(z'x': 0}) k=1] a in (b,) }";
  try {
    cjax::parse_jaxpr(text);
    FAIL("no ParseError");
  } catch (const cjax::ParseError& e) {
    CHECK(std::string(e.what()) == "1:66: unbalanced '}' in a param value of 'my_op'");
  }
  // A ')' with no partner is still text (jax 0.6's PartitionSpec reprs).
  CHECK_NOTHROW(cjax::parse_jaxpr(
      "{ lambda ; a:f32[3]. let b:f32[3] = my_op[spec=P('x', None)) k=1] a in (b,) }"));
}

TEST_CASE("robustness: a param value may not start with '=' (fuzz)") {
  // `jvp= = f` printed back as `jvp== f`, which reads as no key at all.
  try {
    cjax::parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = my_op[jvp= = f k=1] a in (b,) }");
    FAIL("no ParseError");
  } catch (const cjax::ParseError& e) {
    CHECK(std::string(e.what()) == "1:48: expected a value after 'jvp=', got '='");
  }
}

TEST_CASE("robustness: a JSON number too big for a double is an error, not a crash (fuzz)") {
  try {
    cjax::jaxpr_from_json("{\"format\": 1e999}");
    FAIL("no cjax::Error");
  } catch (const cjax::Error& e) {
    CHECK(std::string(e.what()) == "JSON jaxpr: invalid JSON: number overflow parsing '1e999'");
  }
}

TEST_CASE("robustness: a shared jaxpr in any param of an unknown primitive reads back (fuzz)") {
  // A jaxpr-valued param whose key does not say `jaxpr` printed as a `let` preamble reference,
  // which then read back as text.
  std::string text =
      "let f = { lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) } in\n"
      "{ lambda ; c:f32[3]. let\n"
      "    d:f32[3] = my_call[body=f name=f] c\n"
      "    e:f32[3] = my_call[body=f name=f] d\n"
      "  in (e,) }";
  cjax::JaxprRef j = cjax::parse_jaxpr(text);
  CHECK(j->eqns[0].params.get_jaxpr("body") == j->eqns[1].params.get_jaxpr("body"));
  CHECK(cjax::to_string(*j) == text);
}
