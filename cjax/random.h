// cjax::random: jax.random's explicit, splittable keys (JAX's threefry, bit for bit).
//
//   Array k = cjax::random::key(0);                  // key<fry>[]: a typed key
//   auto ks = cjax::random::split(k, 3);             // key<fry>[3]
//   Array u = cjax::random::uniform(ks[0], {4, 8});  // f32[4,8] in [0, 1)
//   Array raw = cjax::random::PRNGKey(0);            // u32[2]: a raw key, accepted everywhere
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

// jax_threefry_partitionable (runtime/threefry.h): which of JAX's two schemes split and bits use.
bool threefry_partitionable();
void set_threefry_partitionable(bool on);

}  // namespace cjax::random
