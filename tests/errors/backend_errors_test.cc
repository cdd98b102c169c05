// The back end's errors (docs/errors.md, "MLIR / JIT failure"): what the CPU back end cannot
// compile is an UnsupportedError naming it, and a module MLIR rejects is a cjax::Error carrying
// MLIR's own diagnostic; neither aborts, and the CLI exits with 1.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/lower/executable.h"
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
