// The pieces of cjax::random that its files share (not a public header): key checks, JAX's
// jitted helpers, and the bit tricks behind uniform.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax::random::detail {

// JAX's _check_prng_key: a typed key as it is, a raw u32[..., 2] one wrapped (the result is then
// unwrapped again by result_keys).
struct CheckedKey {
  Array key;
  bool raw = false;
};
CheckedKey check_key(const char* fn, const Array& k, const SourceInfo& src);
Array result_keys(const Array& keys, bool raw, const SourceInfo& src);
// JAX's error for a key array where one key is expected.
void expect_single_key(const char* fn, const Array& k, const SourceInfo& src);
// Both checks, for the samplers: the single typed key.
Array single_key(const char* fn, const Array& k, const SourceInfo& src);

// A strongly typed scalar constant of `dtype` (numpy's np.array(v, dtype)).
Array constant(double v, DType dtype, const SourceInfo& src);
// random_bits[bit_width shape] of one typed key.
Array random_bits(const Array& key, int bit_width, const Shape& shape, const SourceInfo& src);
// lax.broadcast_to_rank: leading unit axes up to `rank`.
Array broadcast_to_rank(const Array& x, size_t rank, const SourceInfo& src);

struct FloatBits {
  int nbits, nmant;
  DType uint;
};
// The layout of a float dtype; a TypeError naming `fn` for other dtypes.
FloatBits float_bits(DType t, const SourceInfo& src, const char* fn = "uniform");
// JAX's _uniform body (shape and dtype static).
Array uniform_body(const Array& key, const Array& minval, const Array& maxval, const Shape& shape,
                   DType dtype, const SourceInfo& src);
// `body` traced as `jit[name=name]` over `args` (one output), as JAX's @jit helpers print.
Array jitted(const char* name, const std::function<Array(std::span<const Array>)>& body,
             std::vector<Array> args, const SourceInfo& src);
// JAX's `k1, k2 = _split(key)`: random_split[shape=(2,)] and the two keys sliced out.
std::pair<Array, Array> split2(const Array& key, const SourceInfo& src);

}  // namespace cjax::random::detail
