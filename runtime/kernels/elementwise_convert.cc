// Dtype conversions: convert_element_type (value conversion, also to and from f16/bf16) and
// bitcast_convert_type (same-width reinterpretation).
#include "runtime/kernels/kernel_util.h"
#include "runtime/scalar_convert.h"

namespace cjax::runtime {
namespace {

void convert_into(const Buffer& in, Buffer& out) {
  const int64_t n = in.aval().size();
  dispatch_op<kStorage>(in.aval().dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch_op<kStorage>(out.aval().dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* x = in.as<From>();
      To* y = out.as<To>();
      for (int64_t i = 0; i < n; ++i) y[i] = convert_scalar<To>(x[i]);
    });
  });
}

void convert_element_type_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  if (in[0].aval().shape != out[0].aval().shape)
    kernel_type_error("operand {} does not match the output {}", in[0].aval().str_short(),
                      out[0].aval().str_short());
  convert_into(in[0], out[0]);
}

void bitcast_convert_type_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  if (in[0].aval().shape != out[0].aval().shape || in[0].nbytes() != out[0].nbytes())
    kernel_unsupported("only same-width bitcasts are supported ({} to {})",
                       in[0].aval().str_short(), out[0].aval().str_short());
  if (in[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
}

}  // namespace

Buffer convert_buffer(const Buffer& b, DType to) {
  Buffer out = Buffer::allocate(ShapedArray(to, b.aval().shape));
  convert_into(b, out);
  return out;
}

void register_convert_kernels(KernelRegistry& r) {
  r.add("convert_element_type", convert_element_type_kernel);
  r.add("bitcast_convert_type", bitcast_convert_type_kernel);
}

}  // namespace cjax::runtime
