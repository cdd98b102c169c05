// The values jax 0.11.2 computed for cjax::random's tests
// (tests/golden/jax_0_11_2/random_bits.json, written by scripts/jax_oracle.py), read as 32-bit
// words, and a scope that sets the threefry mode.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cjax/api.h"

namespace cjax::random_values {

inline const nlohmann::json& jax_values() {
  static const nlohmann::json all = [] {
    std::ifstream in(std::string(CJAX_SOURCE_DIR) + "/tests/golden/jax_0_11_2/random_bits.json");
    return nlohmann::json::parse(in);
  }();
  return all;
}

// The 32-bit words of an array (u8/u16 values widened, as the oracle wrote them; bools as 0/1).
inline std::vector<uint32_t> words(const Array& a) {
  const runtime::Buffer& b = a.buffer();
  std::vector<uint32_t> out;
  const int64_t n = a.size();
  switch (a.dtype()) {
    case DType::u8:
      for (int64_t i = 0; i < n; ++i) out.push_back(b.as<uint8_t>()[i]);
      break;
    case DType::u16:
      for (int64_t i = 0; i < n; ++i) out.push_back(b.as<uint16_t>()[i]);
      break;
    case DType::bool_:
      for (int64_t i = 0; i < n; ++i) out.push_back(b.as<bool>()[i] ? 1u : 0u);
      break;
    default:  // 4- and 8-byte elements: their 32-bit words
      out.resize((b.nbytes() + 3) / 4);
      std::memcpy(out.data(), b.data(), b.nbytes());
  }
  return out;
}

inline std::vector<uint32_t> jax_words(const std::string& mode, const std::string& name) {
  const nlohmann::json& v = jax_values().at("values").at(mode).at(name);
  std::vector<uint32_t> out;
  for (const auto& h : v.at("hex"))
    out.push_back(uint32_t(std::stoul(h.get<std::string>(), nullptr, 16)));
  return out;
}

// A bool array's values as 0/1, and JAX's.
inline std::vector<int> bools(const Array& a) {
  std::vector<int> out;
  const runtime::Buffer& b = a.buffer();
  for (int64_t i = 0; i < a.size(); ++i) out.push_back(b.as<bool>()[i] ? 1 : 0);
  return out;
}
inline std::vector<int> jax_bools(const std::string& mode, const std::string& name) {
  return jax_values().at("values").at(mode).at(name).at("values").get<std::vector<int>>();
}

inline float as_float(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

// Restores the mode a test case changed.
struct ModeScope {
  bool saved = random::threefry_partitionable();
  explicit ModeScope(bool on) { random::set_threefry_partitionable(on); }
  ~ModeScope() { random::set_threefry_partitionable(saved); }
};

}  // namespace cjax::random_values
