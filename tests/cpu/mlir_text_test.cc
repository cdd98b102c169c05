// The module `cjax lower` prints is valid MLIR: mlir-opt-19 parses and verifies it, at both
// textual stages, for every built-in example.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/cpu/executable.h"
#include "examples/registry.h"

namespace cjax {
namespace {

bool have_mlir_opt() {
  return std::system("mlir-opt-19 --version > /dev/null 2>&1") == 0;
}

TEST_CASE("lowered modules of every example pass mlir-opt-19's parser and verifier") {
  if (!have_mlir_opt()) {
    WARN("mlir-opt-19 not installed; skipping");
    return;
  }
  const auto path = std::filesystem::temp_directory_path() / "cjax_lower_test.mlir";
  for (const examples::Example& ex : examples::all()) {
    for (lower::Stage stage : {lower::Stage::mlir, lower::Stage::lowered}) {
      INFO(ex.name << (stage == lower::Stage::mlir ? " (mlir)" : " (lowered)"));
      {
        std::ofstream out(path);
        out << lower::lower_to_text(ex.make_jaxpr(), stage, ex.name);
      }
      const std::string cmd = "mlir-opt-19 --verify-diagnostics " + path.string() + " > /dev/null";
      CHECK(std::system(cmd.c_str()) == 0);
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("the lowered text is the same on every run (no addresses in the IR)") {
  const Jaxpr j = examples::get("tutorial/f").make_jaxpr();
  CHECK(lower::lower_to_text(j, lower::Stage::mlir) == lower::lower_to_text(j, lower::Stage::mlir));
  CHECK(lower::lower_to_text(j, lower::Stage::llvm).find("define") != std::string::npos);
}

}  // namespace
}  // namespace cjax
