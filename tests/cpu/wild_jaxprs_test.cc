// The real jaxprs JAX printed (../shared/reference/wild-jaxprs), compiled and run on seeded
// random inputs: every one the back end accepts gives the interpreter's results.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cjax/memory_check.h"
#include "compiler/cpu/executable.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

TEST_CASE("real JAX jaxprs compile and match the interpreter") {
  const std::filesystem::path dir = std::string(CJAX_SHARED_DIR) + "/reference/wild-jaxprs";
  if (!std::filesystem::exists(dir)) {
    WARN("no " << dir << "; skipping");
    return;
  }
  int compiled = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jaxpr") continue;
    INFO(entry.path().filename().string());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    JaxprRef j;
    try {
      j = parse_jaxpr(text.str());
    } catch (const Error&) {
      continue;  // eras the parser rejects are covered by tests/parse
    }
    // GPT-2's training step (vocab 50257, batch 32 x 512 tokens) needs gigabytes of logits:
    // a unit test runs what fits a small machine.
    constexpr size_t kMaxPeakBytes = size_t{256} << 20;
    if (const MemoryNeed need = memory_need(*j); need.peak_bytes > kMaxPeakBytes) {
      WARN(entry.path().filename().string() << " needs " << need.peak_bytes << " bytes; skipped");
      continue;
    }
    std::mt19937 rng(11);
    std::vector<runtime::Buffer> args;
    for (const ShapedArray& a : j->in_avals())
      args.push_back(test::random_buffer(a, rng, 0.1, 0.9));
    std::vector<runtime::Buffer> want;
    try {
      want = runtime::eval_jaxpr(*j, args);
    } catch (const Error&) {
      continue;  // elided constants, 16-bit floats: nothing to compare against
    }
    std::shared_ptr<const lower::Executable> exe;
    try {
      exe = lower::compile(*j, entry.path().filename().string());
    } catch (const UnsupportedError& e) {
      WARN("not compiled: " << e.what());
      continue;
    }
    auto got = exe->run(args);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
    ++compiled;
  }
  CHECK(compiled >= 20);
}

}  // namespace
}  // namespace cjax
