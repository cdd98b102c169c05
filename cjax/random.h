// cjax::random: jax.random's explicit, splittable keys (JAX's threefry, bit for bit).
//
//   Array k = cjax::random::key(0);                  // key<fry>[]: a typed key
//   auto ks = cjax::random::split(k, 3);             // key<fry>[3]
//   Array u = cjax::random::uniform(ks[0], {4, 8});  // f32[4,8] in [0, 1)
//   Array raw = cjax::random::PRNGKey(0);            // u32[2]: a raw key, accepted everywhere
//
// The samplers: uniform, normal, truncated_normal, bernoulli, randint, gumbel, categorical,
// permutation and choice; nn::dropout (cjax/nn.h) is built on bernoulli.
//
// Keys are arrays of the dtype key<fry> (two u32 words each); `key_data` and `wrap_key_data`
// convert. Every function takes a typed key or a raw u32[..., 2] one (returning raw keys for raw
// ones, as JAX). The values are JAX's in both of its threefry modes: jax_threefry_partitionable
// on (JAX >= 0.5, the default) or off (`set_threefry_partitionable(false)`, or the variable JAX
// reads, JAX_THREEFRY_PARTITIONABLE=0). Each function traces to the primitives JAX's does
// (random_seed, random_split, random_fold_in, random_bits, random_wrap, random_unwrap, and the
// jitted `_uniform`, `_normal`).
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax::random {

// jax.random.key(seed): a typed key from an integer seed (random_seed[impl=fry]).
Array key(const Array& seed, SourceInfo src = std::source_location::current());
// jax.random.PRNGKey(seed): the raw u32[2] key (its key_data).
Array PRNGKey(const Array& seed, SourceInfo src = std::source_location::current());
// A typed key array's u32[..., 2] words (random_unwrap), and back (random_wrap[impl=fry]).
Array key_data(const Array& keys, SourceInfo src = std::source_location::current());
Array wrap_key_data(const Array& data, SourceInfo src = std::source_location::current());

// `num` new keys from one, key<fry>[num] (or u32[num, 2] from a raw key).
Array split(const Array& key, int64_t num = 2, SourceInfo src = std::source_location::current());
// Keys of `shape` from one.
Array split(const Array& key, const Shape& shape, SourceInfo src = std::source_location::current());
// A new key from `key` and an integer (converted to u32, as JAX).
Array fold_in(const Array& key, const Array& data,
              SourceInfo src = std::source_location::current());

// Random bits of `shape`, as unsigned integers of `dtype` (u8, u16, u32 or u64).
Array bits(const Array& key, const Shape& shape = {}, DType dtype = DType::u32,
           SourceInfo src = std::source_location::current());
// Uniform floats in [minval, maxval), as jax.random.uniform (the jitted `_uniform`).
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::f32,
              const Array& minval = 0.0, const Array& maxval = 1.0,
              SourceInfo src = std::source_location::current());
// Standard normal floats, as jax.random.normal (erf_inv of a uniform in (-1, 1), times sqrt 2).
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::f32,
             SourceInfo src = std::source_location::current());

// Standard normal floats truncated to (lower, upper), of `shape` (default: the bounds' broadcast
// shape), as jax.random.truncated_normal (erf_inv of a uniform between erf(lower/√2) and
// erf(upper/√2)).
Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       std::optional<Shape> shape = std::nullopt, DType dtype = DType::f32,
                       SourceInfo src = std::source_location::current());
// Booleans that are true with probability p (a float, or an array broadcast to `shape`).
Array bernoulli(const Array& key, const Array& p = 0.5, std::optional<Shape> shape = std::nullopt,
                SourceInfo src = std::source_location::current());
// Integers in [minval, maxval) (bounds broadcast to `shape`), as jax.random.randint: two draws
// of the dtype's bits per value reduced modulo the span (8- and 16-bit dtypes drawn in 32 bits).
Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype = DType::i32, SourceInfo src = std::source_location::current());
// Standard Gumbel floats: -log(-log(u)) for u uniform in [tiny, 1).
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = DType::f32,
             SourceInfo src = std::source_location::current());
// Category indices drawn from softmax(logits) along `axis` (the Gumbel-max trick); `shape`
// defaults to the logits' shape without `axis`, and may add leading axes (independent draws).
// replace=false draws the leading axes' size of distinct categories (the Gumbel top-k trick).
Array categorical(const Array& key, const Array& logits, int64_t axis = -1,
                  std::optional<Shape> shape = std::nullopt, bool replace = true,
                  SourceInfo src = std::source_location::current());
// A random permutation of 0..n-1 (i32), or of x along `axis` (each slice alone if
// `independent`); JAX's sort-based shuffle, so the same key gives JAX's permutation.
Array permutation(const Array& key, int64_t n, SourceInfo src = std::source_location::current());
Array permutation(const Array& key, const Array& x, int64_t axis = 0, bool independent = false,
                  SourceInfo src = std::source_location::current());
// Draws of `shape` from range(a) (a concrete integer) or along `axis` of the array a, with or
// without replacement, uniformly or with probabilities p (a 1-D array of a's size). Drawing the
// elements of an array needs gather except without replacement and p, and is refused until
// cjax has gather.
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             std::optional<Array> p = std::nullopt, int64_t axis = 0,
             SourceInfo src = std::source_location::current());

// jax_threefry_partitionable (runtime/threefry.h): which of JAX's two schemes split and bits use.
bool threefry_partitionable();
void set_threefry_partitionable(bool on);

}  // namespace cjax::random
