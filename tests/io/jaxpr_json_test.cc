// The JSON form of jaxprs (ir/json/json.h): traced examples, their vjp programs and real JAX
// jaxprs round-trip exactly; malformed documents fail with a clear error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
  fails(edit("\"shape\": [\n", "\"shape\": [4294967296, 4294967296,\n"), "overflows int64");
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
}

TEST_CASE("JSON shapes are held to the limits of ir/limits.h") {
  using Catch::Matchers::Contains;
  std::string good = cjax::jaxpr_to_json(
      *cjax::parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"));
  auto with_shape = [&](const std::string& dims) {
    std::string s = good;
    size_t at = s.find("\"shape\": [");
    REQUIRE(at != std::string::npos);
    size_t end = s.find(']', at);
    return s.replace(at, end + 1 - at, "\"shape\": [" + dims + "]");
  };
  auto fails = [](const std::string& text, const std::string& what) {
    CHECK_THROWS_WITH(cjax::jaxpr_from_json(text), what);
  };
  fails(with_shape("4294967296, 4294967296, 3"),
        "JSON jaxpr: jaxprs[0].invars[0].aval.shape: f32[4294967296,4294967296,3] has too many "
        "elements: the product of its dimensions overflows int64");
  fails(with_shape("0, 4294967296, 4294967296"),
        "JSON jaxpr: jaxprs[0].invars[0].aval.shape: f32[0,4294967296,4294967296] has too many "
        "elements: the product of its dimensions overflows int64");
  fails(with_shape("2305843009213693952"),
        "JSON jaxpr: jaxprs[0].invars[0].aval.shape: f32[2305843009213693952] is too large: its "
        "size in bytes overflows int64");
  std::string ones = "1";
  for (int i = 1; i < 65; ++i) ones += ", 1";
  fails(with_shape(ones),
        "JSON jaxpr: jaxprs[0].invars[0].aval.shape: rank 65 exceeds the limit of 64 dimensions");
  // Huge but representable: a valid type (the check is a later pass's business).
  CHECK(cjax::jaxpr_from_json(with_shape("100000, 100000, 100000"))->invars[0].aval().str_short() ==
        "f32[100000,100000,100000]");
}

namespace {

// A document of n jaxprs, each but the first calling the one before through jit: n levels of
// nesting in JSON only four levels deep.
std::string jit_chain(int n) {
  using Json = nlohmann::ordered_json;
  Json doc = Json::parse(cjax::jaxpr_to_json(*cjax::parse_jaxpr(
      "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr={ lambda ; c:f32[]. let  in (c,) }] a "
      "in (b,) }")));
  REQUIRE(doc["jaxprs"].size() == 2);
  Json caller = doc["jaxprs"][1];
  REQUIRE(caller["eqns"][0]["params"]["jaxpr"]["jaxpr"] == 0);
  doc["jaxprs"].erase(1);
  for (int k = 1; k < n; ++k) {
    int a = 1000 + 2 * k, b = a + 1;  // variables of their own
    caller["invars"][0]["id"] = a;
    caller["eqns"][0]["inputs"][0]["var"] = a;
    caller["eqns"][0]["outputs"][0]["id"] = b;
    caller["outvars"][0]["var"] = b;
    caller["eqns"][0]["params"]["jaxpr"]["jaxpr"] = k - 1;
    doc["jaxprs"].push_back(caller);
  }
  doc["main"] = n - 1;
  return doc.dump();
}

}  // namespace

TEST_CASE("JSON jaxprs and params nest at most 100 levels, counted as in text") {
  const std::string message = "nesting deeper than 100 levels is not supported";
  // A chain of calls: every jaxpr's height counts where it is used.
  cjax::JaxprRef ok = cjax::jaxpr_from_json(jit_chain(100));
  CHECK_NOTHROW(cjax::verify(*ok));
  CHECK_THROWS_WITH(cjax::jaxpr_from_json(jit_chain(101)),
                    "JSON jaxpr: jaxprs[100].eqns[0].params.jaxpr.jaxpr: " + message);
  CHECK_THROWS_WITH(cjax::jaxpr_from_json(jit_chain(10000)),
                    "JSON jaxpr: jaxprs[100].eqns[0].params.jaxpr.jaxpr: " + message);
  // What the text reader accepts at the limit, the JSON reader does too.
  std::string text = "{ lambda ; a:f32[]. let  in (a,) }";
  for (int i = 1; i < 100; ++i)
    text = "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=" + text + "] a in (b,) }";
  cjax::JaxprRef deep = cjax::parse_jaxpr(text);
  CHECK(cjax::to_string(*cjax::jaxpr_from_json(cjax::jaxpr_to_json(*deep))) ==
        cjax::to_string(*deep));

  // Lists and tuples of param values are levels too: in the top jaxpr, 99 of them fit.
  std::string good = cjax::jaxpr_to_json(
      *cjax::parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = custom[x=1] a in (b,) }"));
  auto with_x = [&](const std::string& value) {
    std::string s = good;
    size_t at = s.find("\"x\": 1");
    REQUIRE(at != std::string::npos);
    return s.replace(at, 6, "\"x\": " + value);
  };
  auto lists = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  auto tuples = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "{\"tuple\": [";
    for (int i = 0; i < n; ++i) s += "]}";
    return s;
  };
  CHECK_NOTHROW(cjax::jaxpr_from_json(with_x(lists(99))));
  CHECK_NOTHROW(cjax::jaxpr_from_json(with_x(tuples(99))));
  std::string path = "JSON jaxpr: jaxprs[0].eqns[0].params.x";
  for (int i = 0; i < 99; ++i) path += "[0]";
  CHECK_THROWS_WITH(cjax::jaxpr_from_json(with_x(lists(100))), path + ": " + message);
  std::string tuple_path = "JSON jaxpr: jaxprs[0].eqns[0].params.x";
  for (int i = 0; i < 99; ++i) tuple_path += ".tuple[0]";
  CHECK_THROWS_WITH(cjax::jaxpr_from_json(with_x(tuples(100))), tuple_path + ": " + message);

  // JSON deeper than any valid document is refused before it is parsed (nlohmann::json's DOM
  // would copy and compare it recursively), with its line and column.
  try {
    cjax::jaxpr_from_json(with_x(lists(100000)));
    FAIL("no error");
  } catch (const cjax::ParseError& e) {
    CHECK(e.message == "JSON nested deeper than 208 levels is not supported");
    CHECK(e.line > 1);
  }
  CHECK_THROWS_WITH(cjax::jaxpr_from_json(std::string(300, '[')),
                    "1:209: JSON nested deeper than 208 levels is not supported");
  // Brackets inside strings are not nesting.
  CHECK_NOTHROW(cjax::jaxpr_from_json(with_x("\"" + std::string(300, '[') + "\"")));
}

TEST_CASE("looks_like_jaxpr_json tells JSON from jaxpr text") {
  CHECK(cjax::looks_like_jaxpr_json("  {\n \"format\": 1}"));
  CHECK_FALSE(cjax::looks_like_jaxpr_json("{ lambda ; a:f32[]. let  in (a,) }"));
  CHECK_FALSE(cjax::looks_like_jaxpr_json("let f = { lambda ; } in"));
  CHECK_FALSE(cjax::looks_like_jaxpr_json(""));
}
