// The JSON form of jaxprs (ir/json/json.h): traced examples, their vjp programs and real JAX
// jaxprs round-trip exactly; malformed documents fail with a clear error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "examples/registry.h"
#include "ir/errors.h"
#include "ir/json/json.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/vjp.h"

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// JSON -> jaxpr -> JSON is the identity, and the jaxpr prints as the original.
void check_round_trip(const cjax::Jaxpr& j) {
  std::string json = cjax::jaxpr_to_json(j);
  cjax::JaxprRef back = cjax::jaxpr_from_json(json);
  cjax::verify(*back);
  CHECK(cjax::to_string(*back) == cjax::to_string(j));
  CHECK(cjax::jaxpr_to_json(*back) == json);
  CHECK(cjax::jaxpr_to_json(*back, -1).find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE("every built-in example and its vjp programs round-trip through JSON") {
  for (const auto& e : cjax::examples::all()) {
    CAPTURE(e.name);
    cjax::Jaxpr j = e.make_jaxpr();
    check_round_trip(j);
    cjax::VjpResult r = cjax::vjp_jaxpr(j);
    check_round_trip(r.fwd);
    check_round_trip(r.bwd);
  }
}

TEST_CASE("real JAX jaxprs round-trip through JSON") {
  std::filesystem::path dir = std::filesystem::path(CJAX_SHARED_DIR) / "reference/wild-jaxprs";
  if (!std::filesystem::exists(dir)) {
    WARN("no " << dir << ": skipped");
    return;
  }
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jaxpr") continue;
    CAPTURE(entry.path().string());
    cjax::JaxprRef j;
    try {
      j = cjax::parse_jaxpr(slurp(entry.path()));
    } catch (const cjax::ParseError&) {
      continue;  // a format cjax does not read (pre-2021 untyped binders)
    }
    check_round_trip(*j);
    ++n;
  }
  CHECK(n > 10);
}

TEST_CASE("the JSON form keeps source locations, debug names, consts and literal kinds") {
  const auto& e = cjax::examples::get("tutorial/f");
  std::string json = cjax::jaxpr_to_json(e.make_jaxpr());
  CHECK(json.find("\"format\": \"cjax-jaxpr\"") != std::string::npos);
  CHECK(json.find("\"file\": \"examples/tutorial.cc\"") != std::string::npos);
  CHECK(json.find("\"arg_names\": [") != std::string::npos);
  cjax::JaxprRef back = cjax::jaxpr_from_json(json);
  REQUIRE(back->debug);
  CHECK(back->debug->arg_names == std::vector<std::string>{"W1", "W2", "W3", "x"});
  CHECK(back->eqns.at(0).source.summarize() == e.make_jaxpr().eqns.at(0).source.summarize());

  // Literals of every kind and a nan parameter.
  auto j = cjax::parse_jaxpr(
      "{ lambda ; a:f32[3] b:u32[3]. let\n"
      "    c:f32[3] = mul a nan:f32[]\n"
      "    d:u32[3] = add b 4294967295:u32[]\n"
      "    e:f32[3] = max c -inf:f32[]\n"
      "  in (e, d, True:bool[]) }");
  check_round_trip(*j);
}

TEST_CASE("malformed JSON jaxprs fail with the position or the JSON path") {
  using Catch::Matchers::Contains;
  std::string good = cjax::jaxpr_to_json(
      *cjax::parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"));
  auto fails = [](const std::string& text, const std::string& what) {
    CAPTURE(text);
    CHECK_THROWS_WITH(cjax::jaxpr_from_json(text), Contains(what));
  };
  CHECK_THROWS_AS(cjax::jaxpr_from_json("{\"format\": \n  nope}"), cjax::ParseError);
  fails("{\"format\": \n  nope}", "2:");
  fails("[]", "not an object");
  fails("{}", "missing \"format\"");
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  fails(edit("\"version\": 1", "\"version\": 7"), "version");
  fails(edit("\"main\": 0", "\"main\": 3"), "$.main");
  fails(edit("\"var\": 0", "\"var\": 5"), "jaxprs[0].eqns[0].inputs[0].var: variable 5 is used");
  fails(edit("\"dtype\": \"f32\"", "\"dtype\": \"f31\""), "unknown dtype 'f31'");
  fails(edit("\"shape\": [\n", "\"shape\": [-4,\n"), "negative dimension");
  fails(edit("\"shape\": [\n", "\"shape\": [4294967296, 4294967296,\n"), "absurdly large");
  fails(edit("\"primitive\": \"sin\"", "\"primitive\": 3"), "primitive: expected a string");
  fails(edit("\"params\": {}", "\"params\": {\"x\": {\"jaxpr\": 0}}"),
        "params.x.jaxpr: expected an index below 0");
  fails(edit("\"params\": {}", "\"params\": {\"x\": {\"what\": 1}}"), "not a param value");
  std::string lit = cjax::jaxpr_to_json(
      *cjax::parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"));
  auto edit_lit = [&](const std::string& from, const std::string& to) {
    std::string s = lit;
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  fails(edit_lit("\"literal\": 2.0", "\"literal\": true"), "inputs[1].literal: expected a number");
  fails(edit_lit("\"literal\": 2.0", "\"literal\": null"), "expected a number");
  fails(edit_lit("\"literal\": 2.0", "\"literal\": null, \"elided\": false"), "expected true");
  CHECK(cjax::to_string(*cjax::jaxpr_from_json(edit_lit("\"literal\": 2.0", "\"literal\": 2"))) ==
        "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }");
  // Deep nesting is refused, not a stack overflow.
  std::string deep(100000, '[');
  fails(edit("\"params\": {}", "\"params\": {\"x\": " + deep + std::string(100000, ']') + "}"),
        "nest too deeply");
}

TEST_CASE("looks_like_jaxpr_json tells JSON from jaxpr text") {
  CHECK(cjax::looks_like_jaxpr_json("  {\n \"format\": 1}"));
  CHECK_FALSE(cjax::looks_like_jaxpr_json("{ lambda ; a:f32[]. let  in (a,) }"));
  CHECK_FALSE(cjax::looks_like_jaxpr_json("let f = { lambda ; } in"));
  CHECK_FALSE(cjax::looks_like_jaxpr_json(""));
}
