// The pieces of cjax::random that its files share (not a public header): the key check, constants,
// random_bits, JAX's jitted helpers and its two-way split.
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax::random::detail {

// The one typed key a sampler draws from: a raw u32[2] key wrapped; JAX's errors for anything
// else, a key array included.
Array single_key(const char* fn, const Array& k, const SourceInfo& src);

// A strongly typed scalar constant of `dtype` (numpy's np.array(v, dtype)).
Array constant(double v, DType dtype, const SourceInfo& src);
// random_bits[bit_width shape] of one typed key.
Array random_bits(const Array& key, int bit_width, const Shape& shape, const SourceInfo& src);
// `body` traced as `jit[name=name]` over `args` (one output), as JAX's @jit helpers print.
Array jitted(const char* name, const std::function<Array(std::span<const Array>)>& body,
             std::vector<Array> args, const SourceInfo& src);
// JAX's `k1, k2 = _split(key)`: random_split[shape=(2,)] and the two keys sliced out.
std::pair<Array, Array> split2(const Array& key, const SourceInfo& src);

}  // namespace cjax::random::detail
