// cjax-gpu-run: runs GPU programs (`cjax lower --target cuda --emit plan`) on this machine's GPU.
// It links no MLIR or LLVM, only cjax's IR and runtime: a program compiled on one machine runs on
// another that has the NVIDIA driver and cuBLAS. With a program's reference (`--reference`), it
// checks the GPU's results against the interpreter's; with --reps, it times the program against
// its cuBLAS products alone. Exit codes: 0 all ran and matched, 1 a mismatch or a failed run,
// 2 bad usage or no GPU.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/errors.h"
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/gpu_executable.h"

namespace {

using namespace cjax::runtime::cuda;

constexpr const char* kUsage =
    "usage: cjax-gpu-run [--reps N] [--rtol X] PROGRAM...\n"
    "  PROGRAM  a file written by `cjax lower --target cuda --emit plan [--reference]`\n"
    "  --reps N time N runs (median) and N runs of the products alone (default 0: no timing)\n"
    "  --rtol X relative tolerance against the reference for f32 results (default 2e-4)\n";

double tolerance(cjax::DType t, double f32_rtol) {
  if (t == cjax::DType::f64) return 1e-10;
  if (cjax::is_floating(t)) return f32_rtol;
  return 0;
}

// Runs one program; false when it failed or its results differ from its reference.
bool run_one(const std::string& path, int reps, double rtol) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cout << fmt::format("{}: cannot read the file\n", path);
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    GpuExecutable exe(parse_gpu_program(text.str()));
    const GpuProgram& p = exe.program();
    const auto inputs = gpu_test_inputs(p.in_avals);
    // The first run goes step by step, the second replays the CUDA graph captured after it: both
    // are checked.
    GpuRunStats stats, replay;
    const auto outputs = exe.run(inputs, &stats);
    const auto replayed = exe.run(inputs, &replay);
    bool ok = true;
    std::string verdict = "no reference";
    if (!p.reference.empty()) {
      verdict = replay.graph ? "matches the interpreter, stepped and replayed from a CUDA graph"
                             : "matches the interpreter";
      for (size_t o = 0; o < outputs.size() && ok; ++o)
        for (const auto* run : {&outputs, &replayed}) {
          const std::string why = compare_to_reference(summarize((*run)[o]), p.reference[o],
                                                       tolerance(p.out_avals[o].dtype, rtol));
          if (!why.empty()) {
            verdict = fmt::format("MISMATCH in output {} ({}){}: {}", o, p.out_avals[o].str_short(),
                                  run == &replayed ? " replayed from the graph" : "", why);
            ok = false;
            break;
          }
        }
    }
    std::cout << fmt::format(
        "{}: {}; {} kernel launches, {} cuBLAS calls, {} host calls; device arena {} bytes\n",
        p.name, verdict, stats.kernel_launches, stats.cublas_calls, stats.host_calls,
        stats.peak_device_bytes);
    if (stats.offloaded_bytes + stats.fetched_bytes > 0)
      std::cout << fmt::format(
          "  offload: {} bytes copied to pinned host memory, {} back, beside the kernels; {} "
          "bytes pinned\n",
          stats.offloaded_bytes, stats.fetched_bytes, stats.pinned_host_bytes);
    for (const std::string& c : exe.describe_calls())
      if (c.find("on the host") != std::string::npos) std::cout << "  " << c << "\n";
    if (reps > 0) {
      const GpuExecutable::Timing t = exe.time(inputs, reps);
      std::cout << fmt::format(
          "  time: {:.4f} ms a run, {:.4f} ms for its cuBLAS products alone ({:.2f}x)\n", t.run_ms,
          t.products_ms, t.products_ms > 0 ? t.run_ms / t.products_ms : 0.0);
    }
    return ok;
  } catch (const cjax::Error& e) {
    std::cout << fmt::format("{}: FAILED: {}\n", path, e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 0;
  double rtol = 2e-4;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--reps" || a == "--rtol") && i + 1 < argc) {
      char* end = nullptr;
      const std::string v = argv[++i];
      if (a == "--reps")
        reps = static_cast<int>(std::strtol(v.c_str(), &end, 10));
      else
        rtol = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || reps < 0 || rtol <= 0) {
        std::cerr << "cjax-gpu-run: " << a << " takes a positive number, not '" << v << "'\n"
                  << kUsage;
        return 2;
      }
    } else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a.starts_with("-")) {
      std::cerr << "cjax-gpu-run: unknown option " << a << "\n" << kUsage;
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  if (auto why = unavailable_reason()) {
    std::cerr << "cjax-gpu-run: no CUDA device: " << *why << "\n";
    return 2;
  }
  const DeviceInfo info = device_info();
  std::cout << fmt::format("device: {} (sm_{}{}, {} bytes); cuBLAS: {}\n", info.name,
                           info.compute_major, info.compute_minor, info.total_bytes,
                           cublas_unavailable_reason().value_or("loaded"));
  bool all = true;
  for (const std::string& f : files) all = run_one(f, reps, rtol) && all;
  return all ? 0 : 1;
}
