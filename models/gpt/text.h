// The text models/gpt learns: generated English-like prose from a small grammar (names, nouns,
// verbs, adjectives, quoted speech, paragraphs), the same bytes on every machine for a seed, so
// nothing is downloaded. Characters map to 96 token ids: '\n' and the 95 printable ASCII ones.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cjax/api.h"

namespace cjax::models::gpt {

inline constexpr int64_t kCharVocab = 96;

// About `chars` characters of generated prose (whole sentences), deterministic in `seed`.
std::string generate_text(size_t chars, uint64_t seed);

// '\n' -> 0, ' '..'~' -> 1..95; any other byte is a cjax::UsageError naming its offset.
std::vector<int32_t> encode(std::string_view text);
std::string decode(std::span<const int32_t> ids);

// A portable generator (splitmix64) for sampling windows.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

// `batch` windows of seq + 1 tokens at random offsets of `ids`: the inputs i32[batch, seq] and
// the labels (the same windows shifted by one).
std::pair<Array, Array> sample_batch(std::span<const int32_t> ids, int64_t batch, int64_t seq,
                                     SplitMix64& rng);

}  // namespace cjax::models::gpt
