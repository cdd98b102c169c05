// A program for the GPU as data: kernel modules (PTX), the buffers it uses, and the steps that
// run it (kernel launches, runtime calls, frees), in order. compiler/cuda/ makes one from a jaxpr
// through MLIR; runtime/cuda/gpu_executable.h runs one with nothing but the CUDA driver (and
// cuBLAS for products). Its text form (`cjax lower --target cuda --emit plan`) carries a program
// compiled on one machine to another that has a GPU but no MLIR or LLVM (`cjax-gpu-run`).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/shaped_array.h"
#include "runtime/buffer.h"

namespace cjax::runtime::cuda {

// A kernel parameter or a runtime call's pointer: the address of `buffer` plus `offset` bytes,
// or, when `buffer` is -1, an immediate (an index, an integer or a float's bits, zero-extended;
// the driver reads as many bytes as the kernel's parameter has).
struct GpuOperand {
  int buffer = -1;
  int64_t offset = 0;
  uint64_t bits = 0;
};

struct GpuStep {
  enum class Kind { launch, call, free };
  Kind kind = Kind::launch;
  // launch: module index, kernel name, grid and block sizes, parameters
  int module = 0;
  std::string kernel;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  // launch: the parameters; call: the pointers of the call's operands then its results
  std::vector<GpuOperand> operands;
  int call = 0;     // call: index into GpuProgram::calls
  int buffer = -1;  // free: the buffer freed
};

enum class GpuBufferRole { input, output, temp, constant };

struct GpuBuffer {
  GpuBufferRole role = GpuBufferRole::temp;
  int index = 0;  // input: the argument's position; output: the result's; constant: the const's
  size_t bytes = 0;
  std::string data;  // constant: its bytes
};

struct GpuModule {
  std::string name, ptx;
};

// A sample of what the reference interpreter computed for one output on the inputs
// gpu_test_inputs makes: the first elements, and the RMS and mean of all its finite ones.
struct GpuReference {
  std::vector<double> head;
  double rms = 0, mean = 0;
};

struct GpuProgram {
  std::string name;
  std::vector<ShapedArray> in_avals, out_avals;
  // Per output: -1, or the input it returns unchanged, or -2 - k for the k-th constant.
  std::vector<int> forwarded;
  std::vector<GpuModule> modules;
  std::vector<GpuBuffer> buffers;
  // Each runtime call as a one-eqn jaxpr's text (dot_general runs on cuBLAS, anything else on
  // the interpreter's kernel over host copies).
  std::vector<std::string> calls;
  std::vector<GpuStep> steps;
  std::vector<GpuReference> reference;  // empty, or one per output
};

std::string to_text(const GpuProgram& p);
// Reads to_text's form. Throws cjax::ParseError naming the line for malformed text, and for a
// program past the reader's limits (256 MiB of text, 2^20 buffers or steps, rank kMaxRank).
GpuProgram parse_gpu_program(std::string_view text);

// Deterministic arguments for a program's inputs, the same on every machine: floats uniform in
// [-0.1, 0.1] (a 64-layer tanh network of width 256 stays out of its chaotic regime, where the
// order of a product's sums would change its loss in the fourth digit), signed integers -9..9,
// unsigned 0..9, bools and key words from the same hash.
std::vector<Buffer> gpu_test_inputs(const std::vector<ShapedArray>& avals, uint64_t seed = 1);

// The sample of `b` that GpuReference keeps (at most `head` leading elements).
GpuReference summarize(const Buffer& b, size_t head = 256);
// Empty when `got` matches `want` within `rtol` (each element of the head against the larger of
// itself and the RMS; the RMS and the mean at the RMS's scale); otherwise what differs.
std::string compare_to_reference(const GpuReference& got, const GpuReference& want, double rtol);

}  // namespace cjax::runtime::cuda
