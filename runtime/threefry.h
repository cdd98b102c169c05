// JAX's threefry PRNG (jax/_src/prng.py) as plain C++: the Threefry-2x32 hash with 20 rounds
// (Random123's threefry2x32_R(20)), and JAX's two ways of deriving keys and bits from it.
#pragma once

#include <cstdint>
#include <span>

namespace cjax::runtime {

// jax_threefry_partitionable: on (JAX >= 0.5's default) split and random_bits hash each output
// position's index; off (older JAX) they hash a block of counters and cut it up. The setting is
// read from JAX_THREEFRY_PARTITIONABLE (0 or 1) at first use; set_threefry_partitionable
// overrides it. Kernels read it when they run.
bool threefry_partitionable();
void set_threefry_partitionable(bool on);

// Hashes the counter pair (x0, x1) under the key (k0, k1), in place.
void threefry2x32(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1);

// JAX's threefry_2x32(key, counts): the counts (padded with a 0 to an even length) split into
// halves hashed pairwise; out has counts.size() words.
void threefry_2x32(uint32_t k0, uint32_t k1, std::span<const uint32_t> counts,
                   std::span<uint32_t> out);

// The key of a seed (threefry_seed): the seed's high 32 bits (0 unless it is 64-bit) and its
// low 32 bits.
void threefry_seed(int64_t seed, bool wide, uint32_t key[2]);

// split(key, n): n new keys, 2n words.
void threefry_split(const uint32_t key[2], std::span<uint32_t> out);

// fold_in(key, data): the key hashed with the counter (0, data).
void threefry_fold_in(const uint32_t key[2], uint32_t data, uint32_t out[2]);

// random_bits(key, bit_width, shape) for one key: `n` values of `bit_width` bits, as unsigned
// integers of that width written to `out` (n * bit_width / 8 bytes).
void threefry_random_bits(const uint32_t key[2], int bit_width, int64_t n, void* out);

}  // namespace cjax::runtime
