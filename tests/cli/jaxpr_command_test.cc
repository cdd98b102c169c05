// `cjax examples` and `cjax jaxpr`: output and exit codes, as a user sees them.
#include <catch2/catch.hpp>

#include "tests/cli/run_cli.h"
#include "tests/golden/golden.h"

using cli_test::run_cli;

// make_jaxpr(f)(W1, W2, W3, x) as JAX prints it (the tutorial's f), as the CLI prints it.
static std::string tutorial_f() {
  return golden::text("tutorial_f.jaxpr") + "\n";
}

TEST_CASE("cjax examples lists the tutorial's f") {
  auto r = run_cli("examples");
  CHECK(r.code == 0);
  CHECK(r.out.find("tutorial/f ") != std::string::npos);
}

TEST_CASE("cjax jaxpr --example tutorial/f prints JAX's make_jaxpr output") {
  auto r = run_cli("jaxpr --example tutorial/f");
  CHECK(r.code == 0);
  CHECK(r.out == tutorial_f());
  CHECK(r.err.empty());
}

TEST_CASE("cjax jaxpr re-prints a jaxpr read from stdin") {
  auto r = run_cli("jaxpr -", "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos b in (c,) }");
  CHECK(r.code == 0);
  CHECK(r.out == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos b in (c,) }\n");
  // The printed text of an example parses back to itself.
  auto again = run_cli("jaxpr -", tutorial_f());
  CHECK(again.code == 0);
  CHECK(again.out == tutorial_f());
}

TEST_CASE("cjax jaxpr reports bad input with its position and exit code 1") {
  auto r = run_cli("jaxpr -", "{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "cjax: <stdin>: 1:26: sin: output type f32[4] does not match the rule's f32[3]\n");
  auto truncated = run_cli("jaxpr -", "{ lambda ; a:f32[3]. let");
  CHECK(truncated.code == 1);
  CHECK(truncated.err.find("1:25: unexpected end of input") != std::string::npos);
}

TEST_CASE("cjax usage errors exit with code 2") {
  auto unknown = run_cli("jaxpr --example nope");
  CHECK(unknown.code == 2);
  CHECK(unknown.err == "cjax: example nope: unknown example 'nope'; examples: " +
                           unknown.err.substr(unknown.err.find("examples: ") + 10));
  CHECK(unknown.err.find("tutorial/f") != std::string::npos);
  CHECK(run_cli("jaxpr /no/such/file.jaxpr").code == 2);
  CHECK(run_cli("frobnicate").code == 2);
  CHECK(run_cli("jaxpr").code == 2);
}

TEST_CASE("an opaque primitive prints back unchanged") {
  const char* text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = psum[axes=('rows',) axis_index_groups=None] a\n"
      "  in (b,) }\n";
  auto r = run_cli("jaxpr -", text);
  CHECK(r.code == 0);
  CHECK(r.out == text);
}
