// .npy reading and writing (io/npy.h): every dtype round-trips, NumPy's own files read back, and
// malformed files fail with a clear cjax::Error instead of crashing.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "io/npy.h"
#include "ir/errors.h"

using cjax::DType;
using cjax::ShapedArray;
using cjax::runtime::Buffer;

namespace {

// Distinct bytes in every element, so a swapped or misplaced element is visible.
Buffer pattern(const ShapedArray& aval) {
  Buffer b = Buffer::allocate(aval);
  auto* p = static_cast<unsigned char*>(b.data());
  for (size_t i = 0; i < b.nbytes(); ++i)
    p[i] = aval.dtype == DType::bool_ ? (i % 3 == 0) : static_cast<unsigned char>(i * 7 + 1);
  return b;
}

bool same_bytes(const Buffer& a, const Buffer& b) {
  return a.aval().same_type(b.aval()) && a.nbytes() == b.nbytes() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// A .npy file as NumPy writes it, with the given header dict and data bytes.
std::string npy_file(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += major;
  out += '\0';
  size_t n = header.size();
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

}  // namespace

TEST_CASE("every dtype round-trips through .npy bytes") {
  for (DType t :
       {DType::bool_, DType::i8, DType::i16, DType::i32, DType::i64, DType::u8, DType::u16,
        DType::u32, DType::u64, DType::f16, DType::bf16, DType::f32, DType::f64}) {
    for (const cjax::Shape& shape :
         {cjax::Shape{}, cjax::Shape{3}, cjax::Shape{2, 3, 4}, cjax::Shape{0, 5}}) {
      ShapedArray aval(t, shape);
      Buffer b = pattern(aval);
      std::string bytes = cjax::io::write_npy(b);
      CAPTURE(aval.str_short());
      // NumPy's layout: magic, version 1.0, data aligned to 64 bytes.
      CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
      CHECK((bytes.size() - b.nbytes()) % 64 == 0);
      CHECK(same_bytes(cjax::io::read_npy(bytes), b));
    }
  }
}

TEST_CASE("the .npy header is NumPy's") {
  Buffer b = pattern(ShapedArray(DType::f32, {3}));
  std::string bytes = cjax::io::write_npy(b);
  CHECK(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") == 10);
  CHECK(cjax::io::write_npy(pattern(ShapedArray(DType::i64, {2, 5}))).find("'shape': (2, 5), }") !=
        std::string::npos);
  CHECK(cjax::io::write_npy(pattern(ShapedArray(DType::f64, {}))).find("'shape': (), }") !=
        std::string::npos);
  CHECK(cjax::io::npy_descr(DType::bool_) == "|b1");
  CHECK(cjax::io::npy_descr(DType::bf16) == "<V2");
}

TEST_CASE(".npy files as NumPy writes them read back: big-endian, Fortran order, version 2") {
  // np.array([[1, 2, 3], [4, 5, 6]], dtype='>i2', order='F')
  std::string data;
  for (int v : {1, 4, 2, 5, 3, 6}) data += std::string{'\0', static_cast<char>(v)};
  Buffer b = cjax::io::read_npy(
      npy_file("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }", data));
  REQUIRE(b.aval().str_short() == "i16[2,3]");
  CHECK(b.to_doubles() == std::vector<double>{1, 2, 3, 4, 5, 6});

  float f[2] = {1.5f, -2.0f};
  Buffer v2 =
      cjax::io::read_npy(npy_file("{\"descr\": \"<f4\", \"fortran_order\": False, "
                                  "\"shape\": (2,)}",
                                  std::string(reinterpret_cast<char*>(f), 8), 2));
  CHECK(v2.to_doubles() == std::vector<double>{1.5, -2.0});
}

TEST_CASE("files round-trip and a missing file is a usage error") {
  auto path = std::filesystem::temp_directory_path() / "cjax_npy_test.npy";
  Buffer b = pattern(ShapedArray(DType::f32, {4, 4}));
  cjax::io::save_npy(path.string(), b);
  CHECK(same_bytes(cjax::io::load_npy(path.string()), b));
  std::filesystem::remove(path);
  CHECK_THROWS_AS(cjax::io::load_npy(path.string()), cjax::UsageError);
}

TEST_CASE("malformed .npy files fail with a message naming the problem") {
  using Catch::Matchers::Contains;
  std::string good = cjax::io::write_npy(pattern(ShapedArray(DType::f32, {2, 2})));
  auto fails = [](const std::string& bytes, const std::string& what) {
    CAPTURE(what);
    CHECK_THROWS_WITH(cjax::io::read_npy(bytes), Contains("malformed .npy") && Contains(what));
  };
  fails("", "magic");
  fails("PK\x03\x04 a zip file", "magic");
  fails(good.substr(0, 9), "magic");
  fails(good.substr(0, 40), "header claims");
  fails(good.substr(0, good.size() - 1), "needs 16 data bytes, the file has 15");
  fails(good + "x", "the file has 17");
  fails(npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"),
        "unsupported descr '<c8'");
  fails(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "1234"),
        "expected a string");
  fails(npy_file("{'descr': '<f4', 'shape': (1,), }", "1234"), "no 'fortran_order'");
  fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,) ", "1234"), "expected");
  fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""), "dimension");
  // A header that claims an absurd size is rejected before anything is allocated.
  fails(
      npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", ""),
      "overflows");
  fails(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", ""),
        "the file has 0");
  // The limits of ir/limits.h: at most 64 dimensions, and sizes that int64 can hold (the product
  // of the non-zero dimensions too: strides are computed from it).
  auto ones = [](int rank) {
    std::string s = "(";
    for (int i = 0; i < rank; ++i) s += "1, ";
    return s + ")";
  };
  fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': " + ones(65) + ", }", "1234"),
        "rank 65 exceeds the limit of 64 dimensions");
  fails(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': " + ones(100000) + ", }", "1234",
                 2),
        "rank 100000 exceeds the limit of 64 dimensions");
  CHECK(
      cjax::io::read_npy(
          npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': " + ones(64) + ", }", "1234"))
          .aval()
          .rank() == 64);
  fails(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904, 8), }",
                 ""),
        "f64[0,4611686018427387904,8] has too many elements: the product of its dimensions "
        "overflows int64");
  fails(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", ""),
        "f64[2305843009213693952] is too large: its size in bytes overflows int64");
  std::string v9 = good;
  v9[6] = 9;
  fails(v9, "unsupported format version 9.0");
}
