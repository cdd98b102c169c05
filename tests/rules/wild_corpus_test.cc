// The shape rules and canonicalizers against real JAX output: every typed jaxpr of the wild
// corpus (jax 0.2.2x .. 0.11) parses (the parser types each known eqn with its shape rule and
// checks the binders) and verifies.
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "ir/parse/parser.h"
#include "ir/rules/verify.h"
#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;
namespace fs = std::filesystem;

namespace {

fs::path corpus_dir() {
  return fs::path(CJAX_SHARED_DIR) / "reference" / "wild-jaxprs";
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Visits every eqn, nested ones included.
void each_eqn(const Jaxpr& j, const std::function<void(const Eqn&)>& f) {
  for (const Eqn& e : j.eqns) {
    f(e);
    for (const auto& [key, value] : e.params) {
      if (value.is<JaxprRef>() && value.as<JaxprRef>()) each_eqn(*value.as<JaxprRef>(), f);
      if (value.is<ParamTuple>())
        for (const ParamValue& item : value.as<ParamTuple>().items)
          if (item.is<JaxprRef>() && item.as<JaxprRef>()) each_eqn(*item.as<JaxprRef>(), f);
    }
  }
}

}  // namespace

TEST_CASE("every typed wild jaxpr parses and verifies") {
  if (!fs::exists(corpus_dir())) {
    WARN("no wild-jaxprs corpus at " << corpus_dir());
    return;
  }
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(corpus_dir())) {
    const fs::path& p = entry.path();
    if (p.extension() != ".jaxpr") continue;
    std::string name = p.filename().string();
    // 39 and 40 use the untyped pre-2021 format, which cjax does not read.
    if (name.starts_with("39_") || name.starts_with("40_")) continue;
    INFO(name);
    JaxprRef j;
    REQUIRE_NOTHROW(j = parse_jaxpr(read(p)));
    CHECK_NOTHROW(verify(*j));
    ++checked;
  }
  CHECK(checked == 38);
}

TEST_CASE("older eras come out in the current schema") {
  if (!fs::exists(corpus_dir())) {
    WARN("no wild-jaxprs corpus at " << corpus_dir());
    return;
  }
  auto load = [](std::string_view prefix) {
    for (const auto& entry : fs::directory_iterator(corpus_dir()))
      if (entry.path().filename().string().starts_with(prefix))
        return parse_jaxpr(read(entry.path()));
    FAIL("missing corpus file " << prefix);
    return JaxprRef();
  };
  int seen = 0;
  // jax 0.9.2 scan with `linear` and `_split_transpose`.
  each_eqn(*load("04_"), [&](const Eqn& e) {
    if (e.prim->name != "scan") return;
    ++seen;
    CHECK(printed_keys(*e.prim, e.params) ==
          std::vector<std::string>{"_split_transpose", "jaxpr", "length", "linear", "num_carry",
                                   "num_consts", "reverse", "unroll"});
  });
  // jax 0.4: reduce_sum without out_sharding, broadcast_in_dim with shape=.
  each_eqn(*load("35_"), [&](const Eqn& e) {
    if (e.prim->name == "reduce_sum") {
      ++seen;
      CHECK(printed_keys(*e.prim, e.params) == std::vector<std::string>{"axes", "out_sharding"});
    }
    if (e.prim->name == "broadcast_in_dim") CHECK(printed_keys(*e.prim, e.params).empty());
  });
  CHECK(seen == 2);
  // jax 0.2.26 xla_call, jax 0.4.5 pjit: read as jit with name first.
  int jits = 0;
  for (const char* file : {"38_", "33_"})
    each_eqn(*load(file), [&](const Eqn& e) {
      if (e.prim->name != "jit") return;
      ++jits;
      auto keys = printed_keys(*e.prim, e.params);
      REQUIRE(keys.size() >= 2);
      CHECK(keys[0] == "name");
      CHECK(std::find(keys.begin(), keys.end(), "jaxpr") != keys.end());
      CHECK(std::find(keys.begin(), keys.end(), "resource_env") == keys.end());
    });
  CHECK(jits >= 2);
}
