// GPU programs as data, without a GPU: the text form round-trips and its reader names the line
// of what it rejects; the test inputs are the same on every machine; the reference comparison
// tolerates what it should and nothing more; runtime calls say where they will run; and loading a
// program where there is no GPU is a clear "no CUDA device" error.
#include <catch2/catch.hpp>

#include <cmath>

#include "ir/errors.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/gpu_executable.h"
#include "runtime/cuda/gpu_program.h"

namespace cjax::runtime::cuda {
namespace gpu_program_text_test {
namespace {

GpuProgram small_program() {
  GpuProgram p;
  p.name = "example tutorial/f (forward)";
  p.in_avals = {ShapedArray{DType::f32, {5, 4}}, ShapedArray{DType::f32, {4}}};
  p.out_avals = {ShapedArray{DType::f32, {5}}, ShapedArray{DType::f32, {4}}};
  p.forwarded = {-1, 1};
  p.modules = {{"main_kernel", ".version 7.8\n.target sm_90\n// a line\n"}};
  p.buffers = {{GpuBufferRole::input, 0, 80, ""},
               {GpuBufferRole::input, 1, 16, ""},
               {GpuBufferRole::output, 0, 20, ""},
               {GpuBufferRole::temp, 0, 20, ""},
               {GpuBufferRole::constant, 0, 4, std::string("\x01\x00\xff\n", 4)}};
  p.calls = {
      "{ lambda ; a:f32[5,4] b:f32[4]. let\n    c:f32[5] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      preferred_element_type=float32\n    ] a b\n  in (c,) }"};
  GpuStep call;
  call.kind = GpuStep::Kind::call;
  call.call = 0;
  call.operands = {{0, 0, 0}, {1, 0, 0}, {3, 0, 0}};
  GpuStep launch;
  launch.module = 0;
  launch.kernel = "main_kernel";
  launch.grid = {1, 1, 1};
  launch.block = {256, 1, 1};
  launch.operands = {{-1, 0, 5}, {3, 0, 0}, {3, 0, 0}, {-1, 0, 0}, {2, 8, 0}, {-1, 0, 0x3f800000}};
  GpuStep free;
  free.kind = GpuStep::Kind::free;
  free.buffer = 3;
  p.steps = {call, launch, free};
  p.reference = {{{0.25, -1.5, 1e-30}, 0.75, -0.125}, {{}, 0, 0}};
  return p;
}

TEST_CASE("a GPU program's text reads back to the same program") {
  const GpuProgram p = small_program();
  const std::string text = to_text(p);
  const GpuProgram q = parse_gpu_program(text);
  CHECK(to_text(q) == text);
  CHECK(q.name == p.name);
  CHECK(q.modules[0].ptx == p.modules[0].ptx);
  CHECK(q.buffers[4].data == p.buffers[4].data);
  CHECK(q.calls[0] == p.calls[0]);
  REQUIRE(q.steps.size() == 3);
  CHECK(q.steps[1].operands[4].buffer == 2);
  CHECK(q.steps[1].operands[4].offset == 8);
  CHECK(q.steps[1].operands[5].bits == 0x3f800000);
  CHECK(q.reference[0].head[2] == 1e-30);  // floats in hex, exactly
}

TEST_CASE("the GPU program reader names the line of what it rejects") {
  const std::string good = to_text(small_program());
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  REQUIRE_THROWS_WITH(parse_gpu_program("hello\n"),
                      Catch::Contains("1:1") && Catch::Contains("cjax-gpu-program 1"));
  REQUIRE_THROWS_WITH(parse_gpu_program(broken("f32 2 5 4", "f99 2 5 4")),
                      Catch::Contains("4:1") && Catch::Contains("'f99' is not a dtype"));
  REQUIRE_THROWS_WITH(parse_gpu_program(broken("free 3", "free 9")),
                      Catch::Contains("freeing a buffer that does not exist"));
  REQUIRE_THROWS_WITH(parse_gpu_program(broken("b2+8", "b7+8")),
                      Catch::Contains("buffer 7 does not exist"));
  REQUIRE_THROWS_WITH(parse_gpu_program(broken("steps 3", "steps 99999999")),
                      Catch::Contains("more than the reader's limit"));
  REQUIRE_THROWS_WITH(parse_gpu_program(good.substr(0, good.size() / 2)),
                      Catch::Contains("GPU program"));
  const std::string module = "main_kernel " + std::to_string(small_program().modules[0].ptx.size());
  REQUIRE_THROWS_WITH(parse_gpu_program(broken(module, "main_kernel 99999")),
                      Catch::Contains("runs past the end"));
}

TEST_CASE("GPU test inputs are the same everywhere, small floats and small integers") {
  const std::vector<ShapedArray> avals = {ShapedArray{DType::f32, {1000}},
                                          ShapedArray{DType::i32, {100}}};
  const auto a = gpu_test_inputs(avals), b = gpu_test_inputs(avals);
  CHECK(a[0].to_doubles() == b[0].to_doubles());
  CHECK(gpu_test_inputs(avals, 2)[0].to_doubles() != a[0].to_doubles());
  // The first values are fixed: the files `cjax lower --reference` writes are checked elsewhere.
  const auto v = a[0].to_doubles();
  double lo = 1, hi = -1;
  for (double x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  CHECK(lo >= -0.1);
  CHECK(hi <= 0.1);
  CHECK(hi - lo > 0.19);
  for (double x : a[1].to_doubles()) CHECK((x >= -9 && x <= 9 && x == std::floor(x)));
}

TEST_CASE("results are held to the reference within the tolerance, NaNs matching NaNs") {
  const ShapedArray aval{DType::f32, {4}};
  const std::vector<float> want{1.0f, -2.0f, 0.0f, NAN};
  const GpuReference ref = summarize(Buffer::from_data<float>(aval, want));
  CHECK(compare_to_reference(ref, ref, 1e-6).empty());
  const std::vector<float> close{1.0001f, -2.0f, 1e-5f, NAN};
  CHECK(compare_to_reference(summarize(Buffer::from_data<float>(aval, close)), ref, 2e-4).empty());
  const std::vector<float> off{1.01f, -2.0f, 0.0f, NAN};
  CHECK_THAT(compare_to_reference(summarize(Buffer::from_data<float>(aval, off)), ref, 2e-4),
             Catch::Contains("element 0"));
  const std::vector<float> not_nan{1.0f, -2.0f, 0.0f, 3.0f};
  CHECK_FALSE(
      compare_to_reference(summarize(Buffer::from_data<float>(aval, not_nan)), ref, 2e-4).empty());
}

TEST_CASE("each runtime call of a GPU program says where it runs") {
  CHECK(describe_gpu_call(small_program().calls[0]) == "dot_general via cuBLAS: 1 x [5x4] @ [4x1]");
  CHECK_THAT(describe_gpu_call("{ lambda ; a:i32[4] b:i32[4]. let c:i32[4] = rem a b in (c,) }"),
             Catch::StartsWith("rem on the host"));
  CHECK_THAT(describe_gpu_call("{ lambda ; a:f32[4]. let b:f32[4] = device_put[\n"
                               "  copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,)\n"
                               "  devices=('pinned_host',)\n  srcs=(None,)\n] a in (b,) }"),
             Catch::StartsWith("device_put to pinned host memory"));
  REQUIRE_THROWS_AS(describe_gpu_call("{ lambda ; a:f32[4]. let in (a a) }"), ParseError);
}

TEST_CASE("without a GPU, loading a GPU program is a clear error") {
  if (!unavailable_reason()) {
    WARN("a CUDA device is present: the no-device path is not exercised here");
    return;
  }
  REQUIRE_THROWS_AS(GpuExecutable(small_program()), UnsupportedError);
  REQUIRE_THROWS_WITH(GpuExecutable(small_program()), Catch::StartsWith("no CUDA device: "));
}

}  // namespace
}  // namespace gpu_program_text_test
}  // namespace cjax::runtime::cuda
