// Primitives whose outputs are their inputs: name (checkpoint_name), optimization_barrier,
// device_put and stop_gradient forward the operands' buffers (buffers are immutable); copy and
// copy_p really copy.
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// n operands to n outputs; registered with OutputMode::produced.
void forward_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_outputs(out, in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = in[i];
}

void copy_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  if (!in[0].aval().same_type(out[0].aval()))
    kernel_type_error("operand {} does not match the output {}", in[0].aval().str_short(),
                      out[0].aval().str_short());
  if (in[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
}

}  // namespace

void register_identity_kernels(KernelRegistry& r) {
  for (const char* name : {"name", "optimization_barrier", "device_put", "stop_gradient"})
    r.add(name, forward_kernel, OutputMode::produced);
  r.add("copy", copy_kernel);
  r.add("copy_p", copy_kernel);
}

}  // namespace cjax::runtime
