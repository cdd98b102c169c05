// Runs a GpuProgram (runtime/cuda/gpu_program.h) on an NVIDIA GPU through the CUDA driver:
// modules loaded once, constants uploaded once, and every other buffer given its place in one
// device arena, where buffers that are never alive at once share bytes (so the arena is about the
// program's peak). A run copies the arguments in, runs the steps on a stream (kernels, products
// on cuBLAS), and copies the results out: the first run step by step, the later ones replayed
// from a CUDA graph captured after it, one launch for the whole program. Programs with a host call
// (an eqn the GPU cannot run, on the interpreter's kernel) always go step by step. Device memory
// is counted (runtime/cuda/driver.h). Needs no MLIR or LLVM.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/cuda/gpu_program.h"

namespace cjax::runtime::cuda {

struct GpuRunStats {
  // The device memory the run used: the arena that holds its arguments, results and
  // intermediates (laid out so that buffers not alive at once share bytes), and its constants.
  size_t peak_device_bytes = 0;
  size_t kernel_launches = 0, cublas_calls = 0, host_calls = 0;
  bool graph = false;  // replayed from a CUDA graph
  // An offload policy's transfers: bytes copied to pinned host memory and back, on a copy stream
  // beside the kernels; the pinned memory the offloaded values occupy.
  size_t offloaded_bytes = 0, fetched_bytes = 0, pinned_host_bytes = 0;
};

// How a runtime call of a GpuProgram (its one-eqn jaxpr text) runs: "dot_general via cuBLAS: ..."
// or "<prim> on the host (...)". Needs no device; throws cjax::ParseError for malformed text.
std::string describe_gpu_call(const std::string& jaxpr_text);

class GpuExecutable {
 public:
  // Loads the modules on device `ordinal`. Throws cjax::UnsupportedError ("no CUDA device: ...")
  // without one, cjax::Error when the driver rejects a module.
  explicit GpuExecutable(GpuProgram program, int ordinal = 0);
  ~GpuExecutable();
  GpuExecutable(const GpuExecutable&) = delete;
  GpuExecutable& operator=(const GpuExecutable&) = delete;

  // Throws cjax::TypeError when the arguments' types differ from the program's inputs.
  std::vector<Buffer> run(std::span<const Buffer> args, GpuRunStats* stats = nullptr) const;

  // Milliseconds per run with the arguments already on the device (the median of `reps` runs,
  // replayed from the graph),
  // and the same for the cuBLAS products alone, back to back on the same buffers: the floor that
  // a program made of products and cheap elementwise work approaches.
  struct Timing {
    double run_ms = 0, products_ms = 0;
  };
  Timing time(std::span<const Buffer> args, int reps) const;

  // One line per runtime call: "dot_general via cuBLAS: ..." or "<prim> on the host ...".
  std::vector<std::string> describe_calls() const;
  const GpuProgram& program() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cjax::runtime::cuda
