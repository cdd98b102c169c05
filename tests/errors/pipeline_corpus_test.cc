// No pass lets a foreign exception (std::bad_variant_access, std::out_of_range, ...) escape on a
// program a user can hand cjax: every jaxpr (text or JSON) that reads and verifies goes through the
// interpreter, jvp, linearize, vjp, checkpoint under every policy, dce and cse (and,
// in the hidden corpus run, the MLIR back end), each of which must succeed or throw a
// cjax::Error. CI runs the golden files, the real jaxprs of ../shared/reference and the fuzz
// seeds (text and JSON); the hidden `[.corpus]` test runs a whole directory, e.g. the fuzzer's
// corpus:
//   CJAX_CORPUS_DIR=build-fuzz/corpus/fuzz_jaxpr_parser build-hard/tests/test_errors '[.corpus]'
// (CJAX_CORPUS_COMPILE=1 also compiles each program through MLIR: slow; CJAX_CORPUS_TRACE=1
// names each file before checking it).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/cpu/executable.h"
#include "ir/errors.h"
#include "ir/json/json.h"
#include "ir/parse/parser.h"
#include "ir/rules/verify.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/jvp.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/errors/corpus_files.h"

using namespace cjax;

namespace {

using cjax::test::files_in;
using cjax::test::slurp;

// Runs one step; a cjax::Error is an accepted answer, anything else is returned as a failure.
std::string step(const char* name, const std::function<void()>& f) {
  try {
    f();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    return fmt::format("{}: {}: {}", name, typeid(e).name(), e.what());
  }
  return "";
}

size_t elements(const Jaxpr& j) {
  size_t n = 0;
  for (const Var& v : j.invars) n += v.aval().size();
  for (const Eqn& e : j.eqns)
    for (const Var& v : e.outputs) n += v.aval().size();
  return n;
}

// Every failure of the passes on `text` (empty when all of them succeed or throw cjax::Error).
// `read` counts the programs that parse and verify.
std::vector<std::string> pipeline_failures(const std::string& text, bool compile, size_t& read) {
  std::vector<std::string> bad;
  JaxprRef parsed;
  try {
    parsed = looks_like_jaxpr_json(text) ? jaxpr_from_json(text) : parse_jaxpr(text);
    verify(*parsed);
  } catch (const Error&) {
    return bad;  // rejected on reading: what the fuzz target checks
  }
  ++read;
  const Jaxpr& j = *parsed;
  auto run = [&](const char* name, const std::function<void()>& f) {
    std::string why = step(name, f);
    if (!why.empty()) bad.push_back(why);
  };
  // Evaluating needs memory for every value: only modest programs.
  if (elements(j) <= (size_t{1} << 22)) {
    run("interpreter", [&] {
      std::vector<runtime::Buffer> args;
      for (const Var& v : j.invars) args.push_back(runtime::Buffer::full(v.aval(), 0.5));
      runtime::eval_jaxpr(j, args);
    });
    if (compile) run("lower::compile", [&] { lower::compile(j, "corpus"); });
  }
  run("jvp", [&] { verify(jvp_jaxpr(j, std::vector<bool>(j.invars.size(), true), true).jaxpr); });
  run("linearize", [&] { linearize_jaxpr(j); });
  bool vjp_ok = false;
  run("vjp", [&] {
    verify(vjp_jaxpr(j).bwd);
    vjp_ok = true;
  });
  // Checkpointing never stops a program from differentiating: where vjp works, vjp of the
  // checkpointed program works under every policy (any exception is a failure then).
  for (const std::string& p : policies::names()) {
    auto checkpointed = [&] {
      Jaxpr c = checkpoint_jaxpr(j, policies::by_name(p, {"a", "b"}, {"c"}));
      verify(c);
      verify(vjp_jaxpr(c).bwd);
    };
    if (!vjp_ok) {
      run("checkpoint", checkpointed);
      continue;
    }
    try {
      checkpointed();
    } catch (const std::exception& e) {
      bad.push_back(fmt::format("vjp works, but not under checkpoint with {}: {}", p, e.what()));
    }
  }
  run("dce", [&] { verify(dce(j)); });
  run("cse", [&] { verify(cse(j)); });
  return bad;
}

// Returns how many of the files hold programs that parse and verify.
size_t check_files(const std::vector<std::string>& files, bool compile) {
  size_t failing = 0, read = 0;
  const bool trace = std::getenv("CJAX_CORPUS_TRACE") != nullptr;  // to find a crashing input
  for (const std::string& f : files) {
    if (trace) std::cerr << "checking " << f << std::endl;
    std::vector<std::string> bad = pipeline_failures(slurp(f), compile, read);
    if (bad.empty()) continue;
    ++failing;
    for (const std::string& why : bad) std::cerr << f << ": " << why << "\n";
  }
  INFO(failing << " of " << read << " programs fail (details on stderr)");
  CHECK(failing == 0);
  return read;
}

}  // namespace

TEST_CASE("robustness: passes throw only cjax errors on real, golden and fuzzed jaxprs") {
  std::vector<std::string> files =
      files_in(std::string(CJAX_SOURCE_DIR) + "/fuzz/seeds/fuzz_jaxpr_parser");
  for (const std::string& f : files_in(std::string(CJAX_SOURCE_DIR) + "/tests/golden", ".jaxpr"))
    files.push_back(f);
  for (const std::string& f :
       files_in(std::string(CJAX_SHARED_DIR) + "/reference/wild-jaxprs", ".jaxpr"))
    files.push_back(f);
  for (const std::string& f :
       files_in(std::string(CJAX_SOURCE_DIR) + "/fuzz/seeds/fuzz_json_reader"))
    files.push_back(f);
  REQUIRE(files.size() >= 6);
  CHECK(check_files(files, false) >= 6);
}

TEST_CASE("robustness: passes throw only cjax errors on a corpus directory", "[.corpus]") {
  const char* dir = std::getenv("CJAX_CORPUS_DIR");
  if (!dir) {
    WARN("set CJAX_CORPUS_DIR to the directory of jaxprs to check");
    return;
  }
  const char* compile = std::getenv("CJAX_CORPUS_COMPILE");
  std::vector<std::string> files = files_in(dir);
  REQUIRE(!files.empty());
  size_t read = check_files(files, compile && std::string(compile) == "1");
  std::cout << read << " of " << files.size() << " files hold programs that parse and verify\n";
}
