// The PRNG primitives on typed key arrays (each key<fry> element is its two u32 words), by JAX's
// threefry scheme in either mode (runtime/threefry.h).
#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/threefry.h"

namespace cjax::runtime {
namespace {

const uint32_t* key_words(const Buffer& b) {
  return static_cast<const uint32_t*>(b.data());
}
uint32_t* key_words(Buffer& b) {
  return static_cast<uint32_t*>(b.data());
}

// random_seed[impl]: each integer seed's key.
void seed_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const DType t = in[0].aval().dtype;
  const bool wide = itemsize(t) == 8;
  dispatch_op<kInt>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = in[0].as<T>();
    uint32_t* k = key_words(out[0]);
    for (int64_t i = 0, n = in[0].aval().size(); i < n; ++i)
      threefry_seed(static_cast<int64_t>(s[i]), wide, k + 2 * i);
  });
}

// random_wrap / random_unwrap: the same words, seen as keys or as u32 pairs.
void same_words_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  if (in[0].nbytes() != out[0].nbytes())
    kernel_type_error("cannot turn {} into {}", in[0].aval().str_short(),
                      out[0].aval().str_short());
  if (in[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
}

// random_split[shape]: each key's `shape` new keys.
void split_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const int64_t keys = in[0].aval().size();
  const int64_t per = keys ? out[0].aval().size() / keys : 0;
  for (int64_t k = 0; k < keys; ++k)
    threefry_split(key_words(in[0]) + 2 * k,
                   std::span<uint32_t>(key_words(out[0]) + 2 * k * per, size_t(2 * per)));
}

// random_fold_in: each key folded with its message (or the one message).
void fold_in_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 2);
  check_outputs(out, 1);
  const uint32_t* msgs = in[1].as<uint32_t>();
  const bool one = in[1].aval().rank() == 0;
  for (int64_t k = 0, n = in[0].aval().size(); k < n; ++k)
    threefry_fold_in(key_words(in[0]) + 2 * k, msgs[one ? 0 : k], key_words(out[0]) + 2 * k);
}

// random_bits[bit_width shape]: each key's block of bits.
void bits_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const int width = static_cast<int>(params.get_int("bit_width"));
  const int64_t keys = in[0].aval().size();
  const int64_t per = keys ? out[0].aval().size() / keys : 0;
  auto* bytes = static_cast<unsigned char*>(out[0].data());
  for (int64_t k = 0; k < keys; ++k)
    threefry_random_bits(key_words(in[0]) + 2 * k, width, per,
                         bytes + size_t(k * per) * size_t(width / 8));
}

// threefry2x32: the hash, elementwise (scalar operands broadcast).
void threefry_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 4);
  check_outputs(out, 2);
  const int64_t n = out[0].aval().size();
  const uint32_t* w[4];
  bool scalar[4];
  for (size_t i = 0; i < 4; ++i) {
    w[i] = in[i].as<uint32_t>();
    scalar[i] = in[i].aval().rank() == 0;
  }
  uint32_t* y0 = out[0].as<uint32_t>();
  uint32_t* y1 = out[1].as<uint32_t>();
  for (int64_t i = 0; i < n; ++i) {
    auto at = [&](size_t j) { return w[j][scalar[j] ? 0 : i]; };
    uint32_t x0 = at(2), x1 = at(3);
    threefry2x32(at(0), at(1), x0, x1);
    y0[i] = x0;
    y1[i] = x1;
  }
}

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  r.add("random_seed", seed_kernel);
  r.add("random_wrap", same_words_kernel);
  r.add("random_unwrap", same_words_kernel);
  r.add("random_split", split_kernel);
  r.add("random_fold_in", fold_in_kernel);
  r.add("random_bits", bits_kernel);
  r.add("threefry2x32", threefry_kernel);
}

}  // namespace cjax::runtime
