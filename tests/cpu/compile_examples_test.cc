// Every built-in example, and its forward and backward programs, compiled through MLIR and run
// on the example's inputs: the results equal the interpreter's.
#include <catch2/catch.hpp>

#include "compiler/cpu/executable.h"
#include "examples/registry.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

void check_compiled_matches_interpreter(const Jaxpr& jaxpr, std::span<const runtime::Buffer> in,
                                        const std::string& what,
                                        const lower::CompileOptions& options) {
  INFO(what);
  auto exe = lower::compile(jaxpr, what, options);
  auto compiled = exe->run(in);
  auto expected = runtime::eval_jaxpr(jaxpr, in);
  REQUIRE(compiled.size() == expected.size());
  for (size_t i = 0; i < compiled.size(); ++i) {
    INFO("output " << i);
    test::require_close(compiled[i], expected[i]);
  }
}

// Each example whole, and cut into segments of at most three eqns (as a deep network is).
void check_every_example(const lower::CompileOptions& options) {
  for (const examples::Example& ex : examples::all()) {
    const Jaxpr jaxpr = ex.make_jaxpr();
    const std::vector<runtime::Buffer> inputs = ex.default_inputs();
    check_compiled_matches_interpreter(jaxpr, inputs, ex.name, options);

    const auto outs = jaxpr.out_avals();
    if (outs.size() != 1 || !is_floating(outs[0].dtype)) continue;
    VjpResult p = vjp_jaxpr(jaxpr, {true});
    check_compiled_matches_interpreter(p.fwd, inputs, ex.name + " (forward)", options);
    auto fwd_out = runtime::eval_jaxpr(p.fwd, inputs);
    std::vector<runtime::Buffer> bwd_in(fwd_out.begin() + 1, fwd_out.end());
    bwd_in.push_back(runtime::Buffer::full(outs[0], 1.0));
    check_compiled_matches_interpreter(p.bwd, bwd_in, ex.name + " (backward)", options);
  }
}

TEST_CASE("every example compiles and matches the interpreter, forward and backward") {
  check_every_example({});
}

TEST_CASE("every example cut into segments of three eqns matches the interpreter") {
  check_every_example({.max_whole_eqns = 0, .max_segment_eqns = 3});
}

}  // namespace
}  // namespace cjax
