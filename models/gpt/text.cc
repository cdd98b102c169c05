#include "models/gpt/text.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "ir/errors.h"

namespace cjax::models::gpt {
namespace {

using Words = std::vector<std::string_view>;

const Words kNames = {"Ada",  "Boris", "Clara", "Dmitri", "Elena", "Felix", "Greta",
                      "Hugo", "Ines",  "Jonas", "Karla",  "Lucas", "Mira",  "Nils"};
const Words kNouns = {"garden", "river",  "letter", "window", "market", "lantern", "bridge",
                      "forest", "teacup", "violin", "harbor", "mirror", "candle",  "orchard",
                      "castle", "wagon",  "kitten", "storm",  "meadow", "clock"};
const Words kAdjectives = {"quiet",  "golden", "broken", "ancient", "bright", "narrow",
                           "gentle", "hidden", "silver", "crooked", "empty",  "warm"};
const Words kVerbs = {"found",   "painted",  "carried", "watched", "followed",  "opened",
                      "crossed", "repaired", "noticed", "visited", "described", "remembered"};
const Words kPlaces = {"near", "behind", "beside", "under", "beyond", "across"};
const Words kTimes = {"In the morning",  "At dusk",      "Later that day",
                      "Before the rain", "After supper", "Every winter"};
const Words kFeelings = {"happy", "curious", "tired", "surprised", "calm", "worried"};

class Writer {
 public:
  explicit Writer(uint64_t seed) : rng_(seed) {}

  void paragraph(std::string& out) {
    const uint64_t sentences = 3 + rng_.next() % 4;
    for (uint64_t i = 0; i < sentences; ++i) {
      if (i) out += ' ';
      sentence(out);
    }
    out += '\n';
  }

 private:
  std::string_view pick(const Words& w) { return w[rng_.next() % w.size()]; }

  void noun_phrase(std::string& out) {
    out += rng_.next() % 2 ? "the " : "a ";
    if (rng_.next() % 2) (out += pick(kAdjectives)) += ' ';
    out += pick(kNouns);
  }

  void clause(std::string& out) {
    (out += pick(kNames)) += ' ';
    (out += pick(kVerbs)) += ' ';
    noun_phrase(out);
    if (rng_.next() % 3 == 0) {
      ((out += ' ') += pick(kPlaces)) += ' ';
      noun_phrase(out);
    }
  }

  void sentence(std::string& out) {
    switch (rng_.next() % 4) {
      case 0:  // a plain clause
        clause(out);
        out += '.';
        break;
      case 1:  // a time, then a clause
        (out += pick(kTimes)) += ", ";
        clause(out);
        out += '.';
        break;
      case 2: {  // quoted speech
        (out += pick(kNames)) += " said, \"I ";
        (out += pick(kVerbs)) += ' ';
        noun_phrase(out);
        out += ".\"";
        break;
      }
      default:  // a feeling
        ((out += pick(kNames)) += " was ") += pick(kFeelings);
        out += rng_.next() % 2 ? " and smiled." : ".";
        break;
    }
  }

  SplitMix64 rng_;
};

}  // namespace

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string generate_text(size_t chars, uint64_t seed) {
  Writer w(seed);
  std::string out;
  while (out.size() < chars) w.paragraph(out);
  return out;
}

std::vector<int32_t> encode(std::string_view text) {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n')
      ids.push_back(0);
    else if (c >= ' ' && c <= '~')
      ids.push_back(int32_t(c) - ' ' + 1);
    else
      throw UsageError(
          fmt::format("gpt text: byte {} at offset {} is not printable ASCII or a "
                      "newline",
                      int(c), i));
  }
  return ids;
}

std::string decode(std::span<const int32_t> ids) {
  std::string out;
  for (int32_t id : ids) out += id <= 0 || id >= kCharVocab ? '\n' : char(' ' + id - 1);
  return out;
}

std::pair<Array, Array> sample_batch(std::span<const int32_t> ids, int64_t batch, int64_t seq,
                                     SplitMix64& rng) {
  if (ids.size() < size_t(seq) + 1)
    throw UsageError(fmt::format("gpt: the text ({} tokens) is shorter than a window ({})",
                                 ids.size(), seq + 1));
  std::vector<int32_t> inputs, labels;
  inputs.reserve(size_t(batch * seq));
  labels.reserve(size_t(batch * seq));
  const uint64_t starts = ids.size() - size_t(seq);
  for (int64_t b = 0; b < batch; ++b) {
    const size_t start = rng.next() % starts;
    inputs.insert(inputs.end(), ids.begin() + long(start), ids.begin() + long(start) + seq);
    labels.insert(labels.end(), ids.begin() + long(start) + 1, ids.begin() + long(start) + seq + 1);
  }
  return {array(inputs, Shape{batch, seq}), array(labels, Shape{batch, seq})};
}

}  // namespace cjax::models::gpt
