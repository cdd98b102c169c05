// .npz archives (io/npz.h): named arrays round-trip in order, the files are the zip NumPy reads
// (a stored entry per array, checked field by field), and damaged, compressed or oversized
// archives are refused with a message naming what is wrong.
#include <catch2/catch.hpp>

#include <cstring>

#include "io/npy.h"
#include "io/npz.h"
#include "ir/errors.h"

namespace npz_test {

using cjax::DType;
using cjax::ShapedArray;
using cjax::io::NamedBuffers;
using cjax::runtime::Buffer;

Buffer iota(const ShapedArray& aval) {
  Buffer b = Buffer::allocate(aval);
  auto* p = static_cast<unsigned char*>(b.data());
  for (size_t i = 0; i < b.nbytes(); ++i) p[i] = static_cast<unsigned char>(i * 13 + 5);
  return b;
}

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

NamedBuffers sample() {
  return {{"params.wte", iota(ShapedArray(DType::f32, {3, 4}))},
          {"opt_state.inner[1].mu[0]", iota(ShapedArray(DType::bf16, {5}))},
          {"step", iota(ShapedArray(DType::i64, {}))}};
}

TEST_CASE("npz: named arrays round-trip in order") {
  const NamedBuffers in = sample();
  const NamedBuffers out = cjax::io::read_npz(cjax::io::write_npz(in));
  REQUIRE(out.size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    CHECK(out[i].first == in[i].first);
    CHECK(out[i].second.aval().same_type(in[i].second.aval()));
    CHECK(std::memcmp(out[i].second.data(), in[i].second.data(), in[i].second.nbytes()) == 0);
  }
  CHECK(cjax::io::read_npz(cjax::io::write_npz({})).empty());
}

TEST_CASE("npz: the archive is a stored zip of .npy files, as np.savez writes") {
  const NamedBuffers in = sample();
  const std::string z = cjax::io::write_npz(in);
  CHECK(le32(z, 0) == 0x04034b50u);   // a local file header first
  CHECK(le32(z, 8) % 0x10000u == 0);  // method 0: stored
  const size_t name_len = static_cast<unsigned char>(z[26]);
  CHECK(z.substr(30, name_len) == "params.wte.npy");
  const std::string npy = cjax::io::write_npy(in[0].second);
  CHECK(le32(z, 18) == npy.size());                   // compressed = uncompressed size
  CHECK(z.substr(30 + name_len, npy.size()) == npy);  // the .npy bytes, as they are
  CHECK(le32(z, z.size() - 22) == 0x06054b50u);       // the end record, no comment
}

TEST_CASE("npz: damaged, compressed and malformed archives are refused by name") {
  const std::string good = cjax::io::write_npz(sample());
  SECTION("a flipped data byte fails the CRC") {
    std::string z = good;
    z[30 + 14 + 80] ^= 1;
    CHECK_THROWS_WITH(cjax::io::read_npz(z), Catch::Contains("'params.wte.npy' fails its CRC-32"));
  }
  SECTION("a truncated file") {
    CHECK_THROWS_WITH(cjax::io::read_npz(good.substr(0, good.size() / 2)),
                      Catch::Contains("malformed .npz"));
    CHECK_THROWS_WITH(cjax::io::read_npz("PK"), Catch::Contains("too short"));
  }
  SECTION("not a zip") {
    CHECK_THROWS_WITH(cjax::io::read_npz(std::string(100, 'x')),
                      Catch::Contains("no end-of-central-directory record"));
  }
  SECTION("a compressed entry (np.savez_compressed)") {
    std::string z = good;
    const size_t dir = le32(z, z.size() - 22 + 16);
    z[dir + 10] = 8;  // deflate, in the central directory
    CHECK_THROWS_AS(cjax::io::read_npz(z), cjax::UnsupportedError);
    CHECK_THROWS_WITH(cjax::io::read_npz(z), Catch::Contains("np.savez_compressed"));
  }
  SECTION("a directory pointing past the end") {
    std::string z = good;
    const size_t at = z.size() - 22 + 16;
    z[at + 3] = 0x7f;
    CHECK_THROWS_WITH(cjax::io::read_npz(z), Catch::Contains("past the end of the file"));
  }
  SECTION("names") {
    NamedBuffers twice = {{"a", iota(ShapedArray(DType::f32, {1}))},
                          {"a", iota(ShapedArray(DType::f32, {1}))}};
    CHECK_THROWS_WITH(cjax::io::write_npz(twice), Catch::Contains("'a' given twice"));
    NamedBuffers slash = {{"a/b", iota(ShapedArray(DType::f32, {1}))}};
    CHECK_THROWS_WITH(cjax::io::write_npz(slash), Catch::Contains("bad array name 'a/b'"));
  }
}

TEST_CASE("npz: files, and a missing one named") {
  const std::string path = "/nonexistent-dir/x.npz";
  CHECK_THROWS_WITH(cjax::io::load_npz(path),
                    Catch::Contains("cannot open '/nonexistent-dir/x.npz'"));
  CHECK_THROWS_WITH(cjax::io::save_npz(path, sample()), Catch::Contains("cannot write"));
}

}  // namespace npz_test

namespace npz_test {

// Written by Python's zipfile as np.savez does (each entry opened with force_zip64, so the local
// headers carry zip64 extra fields): w = [[1, 2, 3], [4, 5, 6.5]] (f32) and step = 42 (i64).
TEST_CASE("npz: an archive with zip64 local headers, as NumPy writes them") {
  const NamedBuffers arrays =
      cjax::io::load_npz(CJAX_SOURCE_DIR "/tests/io/data/zip64_entries.npz");
  REQUIRE(arrays.size() == 2);
  CHECK(arrays[0].first == "w");
  CHECK(arrays[0].second.aval().same_type(ShapedArray(DType::f32, {2, 3})));
  CHECK(arrays[0].second.to_doubles() == std::vector<double>{1, 2, 3, 4, 5, 6.5});
  CHECK(arrays[1].first == "step");
  CHECK(arrays[1].second.to_doubles() == std::vector<double>{42});
}

}  // namespace npz_test
