// The wild-jaxpr corpus (jaxprs printed by real JAX, 2020-2026; see INDEX.md there): every file
// with typed binders parses and verifies; current-era files print back byte for byte; older
// eras print in the current format, idempotently; the 2020 untyped files are rejected.
//
// File 28 (jax 0.6.2, "altered" layout, unbalanced `P('x', None))` reprs) parses: a value runs to
// the next ` key=` or the `]` at bracket depth 0, and a `)` with no partner is kept as text.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <sstream>
#include <vector>

#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "parse_test_util.h"

using namespace cjax;
using cjax::parse_test::read_corpus;

namespace {

std::string prefix_of(int n) {
  return fmt::format("{:02d}_", n);
}

bool corpus_present() {
  if (read_corpus("01_")) return true;
  WARN("wild-jaxpr corpus not found under " << parse_test::corpus_dir().string() << "; skipped");
  return false;
}

std::string file_text(int n) {
  std::optional<std::string> text = read_corpus(prefix_of(n));
  REQUIRE(text);
  return *text;
}

// The file's jaxpr without the trailing newline every corpus file ends with.
std::string without_final_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string strip_trailing_spaces_per_line(const std::string& s) {
  std::istringstream in(s);
  std::string line, out;
  bool first = true;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (!first) out += '\n';
    out += line;
    first = false;
  }
  return out;
}

std::string reprint(const std::string& text) {
  return to_string(*parse_jaxpr(text));
}

}  // namespace

TEST_CASE("parse corpus: every file with typed binders parses and verifies", "[parse][corpus]") {
  if (!corpus_present()) return;
  for (int n = 1; n <= 38; ++n) {
    INFO("file " << prefix_of(n));
    std::string text = file_text(n);
    JaxprRef j;
    REQUIRE_NOTHROW(j = parse_jaxpr(text));
    CHECK_NOTHROW(verify(*j));
  }
}

TEST_CASE("parse corpus: the untyped 2020 files are rejected", "[parse][corpus]") {
  if (!corpus_present()) return;
  CHECK(parse_test::parse_error(file_text(39)) ==
        "1:16: untyped binder 'a': untyped binders (pre-2021 jaxpr format) are not supported");
  CHECK(parse_test::parse_error(file_text(40)) ==
        "1:13: untyped binder 'a': untyped binders (pre-2021 jaxpr format) are not supported");
}

TEST_CASE("parse corpus: current-era files print back byte for byte", "[parse][corpus]") {
  if (!corpus_present()) return;
  for (int n = 1; n <= 27; ++n) {
    INFO("file " << prefix_of(n));
    std::string expected = without_final_newline(file_text(n));
    std::string printed = reprint(file_text(n));
    if (n >= 6 && n <= 13) {
      // Scraped from rendered HTML: trailing spaces may have been lost (INDEX.md).
      CHECK(strip_trailing_spaces_per_line(printed) == strip_trailing_spaces_per_line(expected));
    } else {
      CHECK(printed == expected);
    }
  }
}

TEST_CASE("parse corpus: printing is idempotent for every era", "[parse][corpus]") {
  if (!corpus_present()) return;
  for (int n = 1; n <= 38; ++n) {
    INFO("file " << prefix_of(n));
    std::string once = reprint(file_text(n));
    std::string twice;
    CHECK_NOTHROW(twice = reprint(once));
    CHECK(twice == once);
    if (n >= 28) {  // older eras come out in the current format
      CHECK(once.find("pjit[") == std::string::npos);
      CHECK(once.find("xla_call[") == std::string::npos);
      // broadcast_in_dim's shape is implied by the binder's type
      CHECK(once.find("broadcast_dimensions=() shape=") == std::string::npos);
    }
  }
}

TEST_CASE("parse corpus: older eras convert to what current JAX prints", "[parse][corpus]") {
  if (!corpus_present()) return;
  // The same programs printed by old and by current JAX: 36 (jaxpr.rst, 2021) and 08 (docs,
  // jax >= 0.10), 38 (xla_call, 2021) and 10 (jit), 29 (jax 0.6.0, accuracy=None) and 18.
  for (auto [old_file, current_file] : {std::pair{36, 8}, {38, 10}, {29, 18}}) {
    INFO("file " << prefix_of(old_file) << " against " << prefix_of(current_file));
    CHECK(strip_trailing_spaces_per_line(reprint(file_text(old_file))) ==
          strip_trailing_spaces_per_line(without_final_newline(file_text(current_file))));
  }
}

TEST_CASE("parse corpus: goldens of old to current conversion", "[parse][corpus]") {
  if (!corpus_present()) return;
  // 34 (jax 0.4.31): untyped literals get types, unused-binder names `g_` lose the underscore.
  CHECK(reprint(file_text(34)) ==
        "{ lambda ; a:f32[]. let\n"
        "    b:bool[] = ge a 0.0:f32[]\n"
        "    c:f32[] = add a 1.0:f32[]\n"
        "    d:f32[] = add a 2.0:f32[]\n"
        "    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
        "    f:f32[] = cond[\n"
        "      branches=(\n"
        "        { lambda ; g:f32[] h:f32[] i:f32[] j:f32[]. let\n"
        "            k:f32[] = sub j h\n"
        "          in (k,) }\n"
        "        { lambda ; l:f32[] m:f32[] n:f32[] o:f32[]. let\n"
        "            p:f32[] = add n l\n"
        "          in (p,) }\n"
        "      )\n"
        "    ] e a a c d\n"
        "  in (f,) }");
  // 37 (jax 0.4.8): the unknown xla_pmap and psum keep their params as read; the known
  // broadcast_in_dim inside prints the current way.
  CHECK(reprint(file_text(37)) ==
        "{ lambda ; a:f32[1,3] b:f32[]. let\n"
        "    c:f32[1,3] = xla_pmap[\n"
        "      axis_name=rows\n"
        "      axis_size=1\n"
        "      backend=None\n"
        "      call_jaxpr={ lambda ; d:f32[] e:f32[3]. let\n"
        "          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n"
        "          g:f32[3] = add e f\n"
        "          h:f32[1] = broadcast_in_dim 1.0:f32[]\n"
        "          i:f32[3] = add g h\n"
        "          j:f32[3] = psum[axes=('rows',) axis_index_groups=None] e\n"
        "          k:f32[3] = div i j\n"
        "        in (k,) }\n"
        "      devices=None\n"
        "      donated_invars=(False, False)\n"
        "      global_axis_size=1\n"
        "      in_axes=(None, 0)\n"
        "      is_explicit_global_axis_size=False\n"
        "      name=inner\n"
        "      out_axes=(0,)\n"
        "    ] b a\n"
        "  in (c,) }");
}

TEST_CASE("parse corpus: shared jaxprs stay shared", "[parse][corpus]") {
  if (!corpus_present()) return;
  // 21: `let lambda = {...} in`, referred to twice by `jaxpr=lambda`.
  JaxprRef j = parse_jaxpr(file_text(21));
  const Jaxpr& inner = *j->eqns[0].params.get_jaxpr("jaxpr");
  CHECK(inner.eqns[0].params.get_jaxpr("jaxpr") == inner.eqns[1].params.get_jaxpr("jaxpr"));
  // 31: four preambles; `_take1` refers to `_where`.
  JaxprRef g = parse_jaxpr(file_text(31));
  CHECK(g->eqns.size() > 20);
}
