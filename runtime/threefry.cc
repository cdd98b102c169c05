#include "runtime/threefry.h"

#include <atomic>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "ir/errors.h"

namespace cjax::runtime {
namespace {

// -1: not read yet.
std::atomic<int> partitionable_mode{-1};

inline uint32_t rotl(uint32_t v, int r) {
  return (v << r) | (v >> (32 - r));
}

// Counter words for output position i (JAX's iota_2x32_shape): i as 64 bits, high then low.
inline void index_words(int64_t i, uint32_t& hi, uint32_t& lo) {
  hi = static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32);
  lo = static_cast<uint32_t>(static_cast<uint64_t>(i));
}

// out[i] = v, `out` being an array of T.
template <class T>
void store(void* out, int64_t i, T v) {
  static_cast<T*>(out)[i] = v;
}

}  // namespace

bool threefry_partitionable() {
  int mode = partitionable_mode.load();
  if (mode < 0) {
    const char* env = std::getenv("JAX_THREEFRY_PARTITIONABLE");
    const std::string_view v = env ? env : "";
    mode = (v == "0" || v == "false" || v == "False") ? 0 : 1;
    partitionable_mode.store(mode);
  }
  return mode == 1;
}

void set_threefry_partitionable(bool on) {
  partitionable_mode.store(on ? 1 : 0);
}

void threefry2x32(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  // Five groups of four rounds, each group followed by a key injection.
  for (uint32_t group = 0; group < 5; ++group) {
    for (int r : kRotations[group % 2]) {
      x0 += x1;
      x1 = rotl(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + group + 1;
  }
}

void threefry_2x32(uint32_t k0, uint32_t k1, std::span<const uint32_t> counts,
                   std::span<uint32_t> out) {
  const size_t n = counts.size(), half = (n + 1) / 2;
  if (n == 0) return;
  // Word i pairs with word half + i (a missing last word is 0).
  for (size_t i = 0; i < half; ++i) {
    uint32_t a = counts[i], b = half + i < n ? counts[half + i] : 0u;
    threefry2x32(k0, k1, a, b);
    out[i] = a;
    if (half + i < n) out[half + i] = b;
  }
}

void threefry_seed(int64_t seed, bool wide, uint32_t key[2]) {
  key[0] = wide ? static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32) : 0u;
  key[1] = static_cast<uint32_t>(static_cast<uint64_t>(seed));
}

void threefry_split(const uint32_t key[2], std::span<uint32_t> out) {
  const int64_t n = static_cast<int64_t>(out.size() / 2);
  if (threefry_partitionable()) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t hi, lo;
      index_words(i, hi, lo);
      threefry2x32(key[0], key[1], hi, lo);
      out[size_t(2 * i)] = hi;
      out[size_t(2 * i + 1)] = lo;
    }
    return;
  }
  std::vector<uint32_t> counts(out.size());
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<uint32_t>(i);
  threefry_2x32(key[0], key[1], counts, out);
}

void threefry_fold_in(const uint32_t key[2], uint32_t data, uint32_t out[2]) {
  uint32_t x0 = 0, x1 = data;
  threefry2x32(key[0], key[1], x0, x1);
  out[0] = x0;
  out[1] = x1;
}

void threefry_random_bits(const uint32_t key[2], int bit_width, int64_t n, void* out) {
  if (n <= 0) return;
  if (threefry_partitionable()) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t b1, b2;
      index_words(i, b1, b2);
      threefry2x32(key[0], key[1], b1, b2);
      switch (bit_width) {
        case 8:
          store<uint8_t>(out, i, static_cast<uint8_t>(b1 ^ b2));
          break;
        case 16:
          store<uint16_t>(out, i, static_cast<uint16_t>(b1 ^ b2));
          break;
        case 32:
          store<uint32_t>(out, i, b1 ^ b2);
          break;
        default:
          store<uint64_t>(out, i, (uint64_t{b1} << 32) | b2);
      }
    }
    return;
  }
  // The original scheme: ceil(n * bit_width / 32) hashed counters, cut into values.
  const uint64_t words = (static_cast<uint64_t>(n) * uint64_t(bit_width) + 31) / 32;
  if (words >= 0xFFFFFFFFull)
    throw UnsupportedError("random_bits: more than 2^32 - 1 words of random bits from one key");
  std::vector<uint32_t> counts(words), bits(words);
  for (size_t i = 0; i < words; ++i) counts[i] = static_cast<uint32_t>(i);
  threefry_2x32(key[0], key[1], counts, bits);
  switch (bit_width) {
    case 8:
    case 16: {
      const int per = 32 / bit_width;
      const uint32_t mask = bit_width == 8 ? 0xFFu : 0xFFFFu;
      for (int64_t k = 0; k < n; ++k) {
        const uint32_t v = (bits[size_t(k / per)] >> (bit_width * (k % per))) & mask;
        if (bit_width == 8)
          store<uint8_t>(out, k, static_cast<uint8_t>(v));
        else
          store<uint16_t>(out, k, static_cast<uint16_t>(v));
      }
      break;
    }
    case 32:
      for (int64_t i = 0; i < n; ++i) store<uint32_t>(out, i, bits[size_t(i)]);
      break;
    default:  // 64: the first half's words are the high words, the second half's the low ones
      for (int64_t i = 0; i < n; ++i)
        store<uint64_t>(out, i, (uint64_t{bits[size_t(i)]} << 32) | bits[size_t(n + i)]);
  }
}

}  // namespace cjax::runtime
