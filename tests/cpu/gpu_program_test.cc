// The GPU back end's programs (compile_gpu_program), checked without a GPU: every straight-line
// example and its backward program compile; the text form reads back to the same program; every
// launch passes as many parameters as its PTX kernel declares; products run on cuBLAS; control
// flow is refused by name. With a GPU (and cuBLAS) here, each program also runs and its results
// are held to the interpreter's.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <regex>

#include "compiler/cpu/executable.h"
#include "compiler/cuda/cuda_backend.h"
#include "compiler/cuda/gpu.h"
#include "examples/registry.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "passes/vjp.h"
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/gpu_executable.h"
#include "runtime/interpreter.h"

namespace cjax {
namespace gpu_program_test {
namespace {

using runtime::cuda::GpuProgram;
using runtime::cuda::GpuStep;

// Each kernel's parameter count, by module and kernel name, read from the PTX.
std::map<std::pair<int, std::string>, size_t> ptx_parameters(const GpuProgram& p) {
  std::map<std::pair<int, std::string>, size_t> out;
  const std::regex entry(R"(\.entry (\w+)\(([^)]*)\))");
  for (size_t m = 0; m < p.modules.size(); ++m) {
    const std::string& ptx = p.modules[m].ptx;
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry);
         it != std::sregex_iterator(); ++it) {
      const std::string params = (*it)[2];
      size_t n = 0;
      for (size_t at = params.find(".param"); at != std::string::npos;
           at = params.find(".param", at + 1))
        ++n;
      out[{static_cast<int>(m), (*it)[1]}] = n;
    }
  }
  return out;
}

// The straight-line programs: each example and the backward program of its vjp.
std::vector<std::pair<std::string, Jaxpr>> straight_line_programs() {
  std::vector<std::pair<std::string, Jaxpr>> out;
  for (const examples::Example& ex : examples::all()) {
    if (ex.name.starts_with("scan/") || ex.name.starts_with("cond/") ||
        ex.name.starts_with("loop/"))
      continue;
    Jaxpr j = ex.make_jaxpr();
    out.emplace_back(ex.name, j);
    const auto outs = j.out_avals();
    if (outs.size() == 1 && is_floating(outs[0].dtype))
      out.emplace_back(ex.name + " (backward)", vjp_jaxpr(j, {true}).bwd);
  }
  return out;
}

// Within `rtol` of the larger of each element and the array's RMS (cuBLAS sums in another order).
void require_near(const runtime::Buffer& got, const runtime::Buffer& want, double rtol) {
  REQUIRE(got.aval().shape == want.aval().shape);
  const auto g = got.to_doubles(), w = want.to_doubles();
  double sum_sq = 0;
  for (double x : w) sum_sq += x * x;
  const double scale = w.empty() ? 0 : std::sqrt(sum_sq / static_cast<double>(w.size()));
  for (size_t i = 0; i < w.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    REQUIRE(std::abs(g[i] - w[i]) <= rtol * std::max(std::abs(w[i]), scale));
  }
}

TEST_CASE("every straight-line example compiles to a GPU program whose launches fit its kernels") {
  size_t programs = 0, launches = 0, products = 0;
  for (const auto& [name, jaxpr] : straight_line_programs()) {
    INFO(name);
    const GpuProgram p = lower::compile_gpu_program(jaxpr, name);
    ++programs;
    // The text form reads back to the same program.
    const std::string text = runtime::cuda::to_text(p);
    CHECK(runtime::cuda::to_text(runtime::cuda::parse_gpu_program(text)) == text);
    const auto params = ptx_parameters(p);
    for (const GpuStep& st : p.steps) {
      if (st.kind != GpuStep::Kind::launch) continue;
      ++launches;
      auto it = params.find({st.module, st.kernel});
      REQUIRE(it != params.end());
      CHECK(it->second == st.operands.size());
      CHECK(uint64_t{st.block[0]} * st.block[1] * st.block[2] <= 1024);
    }
    for (const std::string& call : p.calls) {
      const std::string how = runtime::cuda::describe_gpu_call(call);
      INFO(call);
      if (call.find("dot_general") != std::string::npos && call.find("f32[") != std::string::npos) {
        CHECK(how.starts_with("dot_general via cuBLAS"));
        ++products;
      }
    }
  }
  CHECK(programs >= 40);
  CHECK(launches >= 100);
  CHECK(products >= 50);
}

TEST_CASE("a full reduction and scalar code become kernels: the host keeps no loop") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[64,512] b:f32[64,512]. let c:f32[64,512] = sub a b; "
      "d:f32[64,512] = integer_pow[y=2] c; e:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d; "
      "f:f32[] = div e 32768.0:f32[] in (f,) }");
  const GpuProgram p = lower::compile_gpu_program(*j, "loss");
  size_t launches = 0;
  for (const GpuStep& st : p.steps) launches += st.kind == GpuStep::Kind::launch;
  CHECK(launches >= 1);
  CHECK(p.calls.empty());
  // A reduction over the leading axis is a parallel loop over the kept one (512 threads).
  JaxprRef col = parse_jaxpr(
      "{ lambda ; a:f32[64,512]. let b:f32[512] = reduce_sum[axes=(0,) out_sharding=None] a "
      "in (b,) }");
  const GpuProgram q = lower::compile_gpu_program(*col, "colsum");
  REQUIRE(q.steps.size() >= 1);
  const auto it = std::find_if(q.steps.begin(), q.steps.end(),
                               [](const GpuStep& s) { return s.kind == GpuStep::Kind::launch; });
  REQUIRE(it != q.steps.end());
  CHECK(uint64_t{it->grid[0]} * it->block[0] >= 512);
}

TEST_CASE("control flow is refused for the GPU by name, and so are unsupported dtypes") {
  for (const char* name : {"scan/net", "cond/branches", "loop/fori"}) {
    INFO(name);
    const Jaxpr j = examples::get(name).make_jaxpr();
    REQUIRE_THROWS_AS(lower::compile_gpu_program(j, name), UnsupportedError);
    REQUIRE_THROWS_WITH(lower::compile_gpu_program(j, name),
                        Catch::Contains("straight-line") && Catch::Contains(name));
  }
  JaxprRef half = parse_jaxpr("{ lambda ; a:f16[3]. let b:f16[3] = sin a in (b,) }");
  REQUIRE_THROWS_AS(lower::compile_gpu_program(*half, "half"), UnsupportedError);
}

TEST_CASE("an offload policy's transfers become copies to pinned host memory and back") {
  const std::string put = "device_put[copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) devices=";
  JaxprRef fwd = parse_jaxpr(
      "{ lambda ; a:f32[64,64] b:f32[64,64]. let c:f32[64,64] = dot_general["
      "dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32] a b; "
      "d:f32[64,64] = " +
      put +
      "('pinned_host',) srcs=(None,)] c; e:f32[64,64] = sin c "
      "in (e, d) }");
  const GpuProgram p = lower::compile_gpu_program(*fwd, "offload");
  size_t offloads = 0;
  for (const GpuStep& st : p.steps) {
    if (st.kind != GpuStep::Kind::call) continue;
    const std::string how = runtime::cuda::describe_gpu_call(p.calls[st.call]);
    if (!how.starts_with("device_put to pinned host memory")) continue;
    ++offloads;
    // From the product's buffer into the program's second result.
    REQUIRE(st.operands.size() == 2);
    const auto& dst = p.buffers[static_cast<size_t>(st.operands[1].buffer)];
    CHECK(dst.role == runtime::cuda::GpuBufferRole::output);
    CHECK(dst.index == 1);
  }
  CHECK(offloads == 1);
  JaxprRef bwd = parse_jaxpr("{ lambda ; a:f32[64,64]. let b:f32[64,64] = " + put +
                             "('device',) srcs=(None,)] a; c:f32[64,64] = sin b in (c,) }");
  const GpuProgram q = lower::compile_gpu_program(*bwd, "fetch");
  REQUIRE_FALSE(q.calls.empty());
  CHECK_THAT(runtime::cuda::describe_gpu_call(q.calls[0]),
             Catch::StartsWith("device_put to device memory"));
  // Elsewhere a device_put forwards its operand: the CPU back end compiles no call for it.
  CHECK(lower::compile(*bwd, "fetch")->compile_stats().runtime_calls.empty());
}

TEST_CASE("the GPU back end as evaluator: refused clearly without a GPU") {
  if (!runtime::cuda::cublas_unavailable_reason()) return;  // checked by the GPU test below
  REQUIRE_THROWS_AS(make_cuda_backend(), UnsupportedError);
  REQUIRE_THROWS_WITH(make_cuda_backend(), Catch::StartsWith("no CUDA device: "));
}

TEST_CASE("on a GPU: every straight-line program's results equal the interpreter's") {
  if (auto why = runtime::cuda::cublas_unavailable_reason()) {
    WARN("skipped: " << *why);
    return;
  }
  // Through the evaluator too: a program and its consts, run by a CudaBackend.
  {
    const Jaxpr f = examples::get("tutorial/f").make_jaxpr();
    const auto inputs = runtime::cuda::gpu_test_inputs(f.in_avals());
    const auto got = make_cuda_backend()->run(f, {}, inputs);
    const auto want = runtime::eval_jaxpr(f, inputs);
    for (size_t o = 0; o < got.size(); ++o) require_near(got[o], want[o], 2e-4);
  }
  for (const auto& [name, jaxpr] : straight_line_programs()) {
    INFO(name);
    runtime::cuda::GpuExecutable exe(lower::compile_gpu_program(jaxpr, name));
    const auto inputs = runtime::cuda::gpu_test_inputs(exe.program().in_avals);
    const auto got = exe.run(inputs);
    const auto want = runtime::eval_jaxpr(jaxpr, inputs);
    REQUIRE(got.size() == want.size());
    for (size_t o = 0; o < got.size(); ++o)
      require_near(got[o], want[o], got[o].aval().dtype == DType::f64 ? 1e-10 : 2e-4);
  }
}

}  // namespace
}  // namespace gpu_program_test
}  // namespace cjax
