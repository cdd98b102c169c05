// The back end's errors (docs/errors.md, "MLIR / JIT failure"): what the CPU back end cannot
// compile is an UnsupportedError naming it, and a module MLIR rejects is a cjax::Error carrying
// MLIR's own diagnostic; neither aborts, and the CLI exits with 1.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "compiler/cpu/executable.h"
#include "ir/errors.h"
#include "ir/rules/registry.h"
#include "tests/cli/run_cli.h"

using cli_test::run_cli;
using namespace cjax;

namespace {

// { lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }, built by hand: the parser and the
// verifier would reject it (sin's rule gives f32[3]), so it reaches the back end only through
// the C++ API, where nothing checks it before MLIR's verifier does.
Jaxpr ill_typed_sin() {
  Var a(ShapedArray(DType::f32, {3}));
  Var b(ShapedArray(DType::f32, {4}));
  Eqn e;
  e.prim = &get_primitive("sin");
  e.inputs = {Atom(a)};
  e.outputs = {b};
  Jaxpr j;
  j.invars = {a};
  j.eqns.push_back(std::move(e));
  j.outvars = {Atom(b)};
  return j;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UnsupportedError& e) {
    return std::string("UnsupportedError: ") + e.what();
  } catch (const Error& e) {
    return std::string("Error: ") + e.what();
  }
  return "no exception";
}

}  // namespace

TEST_CASE("errors: MLIR's verifier rejecting a lowered module is a cjax::Error with its words") {
  Jaxpr j = ill_typed_sin();
  const std::string diag =
      "lower: the lowered module is not valid MLIR: 'linalg.generic' op inferred input/output "
      "operand #1 has shape's dimension #0 to be 3, but found 4";
  CHECK(error_of([&] { lower::compile(j, "hand-built"); }) == "Error: " + diag);
  for (lower::Stage s : {lower::Stage::mlir, lower::Stage::lowered, lower::Stage::llvm})
    CHECK(error_of([&] { lower::lower_to_text(j, s, "hand-built"); }) == "Error: " + diag);
  // The same function, well typed, compiles: the failure was the module, not the back end.
  Jaxpr good = ill_typed_sin();
  good.eqns[0].outputs = {Var(ShapedArray(DType::f32, {3}))};
  good.outvars = {Atom(good.eqns[0].outputs[0])};
  CHECK(lower::compile(good, "hand-built")
            ->out_avals()
            .at(0)
            .same_type(ShapedArray(DType::f32, {3})));
}

TEST_CASE("errors: what the CPU back end cannot compile is an UnsupportedError, exit code 1") {
  const std::string text = "{ lambda ; a:f16[3]. let b:f16[3] = sin a in (b,) }";
  for (const char* cmd : {"run -", "lower -", "grad -"}) {
    auto r = run_cli(cmd, text);
    INFO(cmd << ": " << r.err);
    CHECK(r.code == 1);
    CHECK(r.out.empty());
    CHECK(r.err ==
          "cjax: <stdin>: lower: argument: the CPU back end does not compile f16 arrays\n");
  }
  // The program itself is valid.
  CHECK(run_cli("jaxpr -", text).code == 0);
  // Through --verbose the type is named.
  auto v = run_cli("run - --verbose", text);
  CHECK(v.code == 1);
  CHECK(v.err.find("\n  error type: cjax::UnsupportedError\n") != std::string::npos);
}

namespace {

// Whether this machine's CPU reports `flag` in /proc/cpuinfo.
bool cpu_has(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0)
      return (line + " ").find(" " + flag + " ") != std::string::npos;
  return false;
}

// run_cli with CJAX_TARGET_CPU set to `cpu` for the command.
cli_test::Result run_for_cpu(const char* cpu, const std::string& args) {
  setenv("CJAX_TARGET_CPU", cpu, 1);
  cli_test::Result r = run_cli(args);
  unsetenv("CJAX_TARGET_CPU");
  return r;
}

}  // namespace

TEST_CASE("CJAX_TARGET_CPU names the JIT's CPU, one this machine cannot run is refused") {
  // The baseline x86-64 runs everywhere (no AVX, no FMA): the same program, other code.
  auto baseline = run_for_cpu("x86-64", "run --example tutorial/f --seed 3");
  CHECK(baseline.code == 0);
  CHECK(baseline.out.rfind("out: Array([", 0) == 0);
  auto unknown = run_for_cpu("cortex-a53", "run --example tutorial/f");
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("CJAX_TARGET_CPU=cortex-a53: not a CPU LLVM knows; use native, "
                         "x86-64-v2, x86-64-v3, x86-64-v4") != std::string::npos);
  CHECK(unknown.err.find("not a recognized processor") == std::string::npos);  // LLVM's own
  if (cpu_has("avx512f")) {
    WARN("this CPU has AVX-512: x86-64-v4 runs here, its refusal is not tested");
  } else {
    auto v4 = run_for_cpu("x86-64-v4", "run --example tutorial/f");
    CHECK(v4.code == 1);
    CHECK(v4.err.find("lacks instruction sets that it requires (avx512") != std::string::npos);
  }
}
