// The GPU path up to PTX, which runs without a GPU: every example's forward and backward
// programs become kernels for sm_90, and CUDA's ptxas (where installed) accepts each module.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/cuda/gpu.h"
#include "examples/registry.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "passes/vjp.h"

namespace cjax {
namespace {

namespace fs = std::filesystem;

// CUDA's ptxas, or empty when this machine has none.
std::string find_ptxas() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (fs::exists(p)) return p;
  return "";
}

// Runs ptxas on `ptx`; returns its exit status.
int assemble(const std::string& ptxas, const std::string& ptx, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("cjax-ptx-{}", ::getpid());
  fs::create_directories(dir);
  const fs::path file = dir / (name + ".ptx");
  std::ofstream(file) << ptx;
  const std::string cmd = fmt::format("{} -arch=sm_90 -O3 {} -o {} 2>&1", ptxas, file.string(),
                                      (dir / (name + ".cubin")).string());
  const int status = std::system(cmd.c_str());
  fs::remove_all(dir);
  return status;
}

void check_ptx(const Jaxpr& j, const std::string& what, const std::string& ptxas, size_t& modules) {
  INFO(what);
  for (const lower::GpuKernelModule& m : lower::compile_to_ptx(j, what)) {
    INFO(m.name);
    CHECK(m.ptx.find(".target sm_90") != std::string::npos);
    CHECK(m.ptx.find(".entry") != std::string::npos);
    if (!ptxas.empty()) CHECK(assemble(ptxas, m.ptx, m.name) == 0);
    ++modules;
  }
}

TEST_CASE("every example's kernels compile to PTX for sm_90 that ptxas accepts") {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty()) WARN("no ptxas (CUDA toolkit) here: PTX is generated but not assembled");
  size_t modules = 0;
  for (const examples::Example& ex : examples::all()) {
    const Jaxpr j = ex.make_jaxpr();
    check_ptx(j, ex.name, ptxas, modules);
    const auto outs = j.out_avals();
    if (outs.size() != 1 || !is_floating(outs[0].dtype)) continue;
    VjpResult p = vjp_jaxpr(j, {true});
    check_ptx(p.bwd, ex.name + " (backward)", ptxas, modules);
  }
  CHECK(modules >= 20);
}

TEST_CASE("an elementwise chain is one kernel on a one-dimensional grid of 256-thread blocks") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[64,1000] b:f32[64,1000]. let c:f32[64,1000] = sin a; "
      "d:f32[64,1000] = mul c b; e:f32[64,1000] = tanh d in (e,) }");
  const std::string mlir = lower::lower_to_gpu_text(*j, lower::GpuStage::mlir, "t");
  // One launch: ceil(64 * 1000 / 256) blocks of 256 threads, the loop nest collapsed, the chain
  // fused.
  size_t launches = 0;
  for (size_t at = mlir.find("gpu.launch_func"); at != std::string::npos;
       at = mlir.find("gpu.launch_func", at + 1))
    ++launches;
  CHECK(launches == 1);
  CHECK(mlir.find("blocks in (%c250, %c1, %c1) threads in (%c256, %c1, %c1)") != std::string::npos);
  const auto modules = lower::compile_to_ptx(*j, "t");
  REQUIRE(modules.size() == 1);
  // The bounds check of the last, partial block.
  CHECK(modules[0].ptx.find("setp.") != std::string::npos);
}

TEST_CASE("GPU lowering errors name the primitive, as the CPU path does") {
  JaxprRef j = parse_jaxpr("{ lambda ; a:f16[3]. let b:f16[3] = sin a in (b,) }");
  REQUIRE_THROWS_AS(lower::compile_to_ptx(*j, "half.jaxpr"), UnsupportedError);
}

}  // namespace
}  // namespace cjax
