#include <cmath>
#include <limits>
#include <thread>

#include "ir/errors.h"
#include "runtime_test_util.h"

using namespace cjax;
using namespace cjax::runtime;
using namespace cjax::runtime::testing;

TEST_CASE("allocator: live and peak bytes go up and back down") {
  const MemoryStats before = memory_stats();
  reset_peak_bytes();
  {
    Buffer a = Buffer::allocate(ShapedArray(DType::f32, {256}));  // 1024 bytes
    Buffer b = Buffer::zeros(ShapedArray(DType::f64, {4, 8}));    // 256 bytes
    MemoryStats s = memory_stats();
    CHECK(s.live_bytes == before.live_bytes + 1280);
    CHECK(s.peak_bytes >= before.live_bytes + 1280);
    CHECK(s.allocations == before.allocations + 2);
    {
      Buffer copy = a;  // copies share storage: no new allocation
      CHECK(memory_stats().live_bytes == before.live_bytes + 1280);
      CHECK(copy.data() == a.data());
    }
    a = Buffer();  // dropping the last reference frees
    CHECK(memory_stats().live_bytes == before.live_bytes + 256);
  }
  MemoryStats after = memory_stats();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.peak_bytes >= before.live_bytes + 1280);
  reset_peak_bytes();
  CHECK(memory_stats().peak_bytes == after.live_bytes);
}

TEST_CASE("allocator: counters are consistent under concurrent use") {
  const size_t live0 = memory_stats().live_bytes;
  auto work = [] {
    for (int i = 0; i < 200; ++i) {
      Buffer b = Buffer::allocate(ShapedArray(DType::u8, {100}));
      Buffer c = b;
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  CHECK(memory_stats().live_bytes == live0);
}

TEST_CASE("Buffer: zeros, full, from_data and element") {
  Buffer z = Buffer::zeros(ShapedArray(DType::i32, {2, 2}));
  CHECK(vals(z) == std::vector<double>{0, 0, 0, 0});
  CHECK(z.nbytes() == 16);
  CHECK(static_cast<bool>(z));
  CHECK_FALSE(static_cast<bool>(Buffer()));

  Buffer f = Buffer::full(ShapedArray(DType::i32, {3}), 2.9);  // converted: truncates
  CHECK(vals(f) == std::vector<double>{2, 2, 2});
  Buffer b = Buffer::full(ShapedArray(DType::bool_, {2}), 0.5);
  CHECK(vals(b) == std::vector<double>{1, 1});
  Buffer s = Buffer::full(ShapedArray(DType::f64, {}), -1.25);
  CHECK(s.aval().str_short() == "f64[]");
  CHECK(s.element(0) == -1.25);

  Buffer d = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(d.aval().str_short() == "f32[2,3]");
  CHECK(d.as<float>()[4] == 5.0f);
  CHECK(d.element(5) == 6.0);
  CHECK_THROWS_AS(d.element(6), Error);

  Buffer u = make<uint64_t>(DType::u64, {1}, {uint64_t{1} << 40});
  CHECK(u.element(0) == std::ldexp(1.0, 40));
  Buffer bo = boolean({3}, {true, false, true});
  CHECK(vals(bo) == std::vector<double>{1, 0, 1});
}

TEST_CASE("Buffer: from_data rejects a wrong element type or count") {
  std::vector<float> data{1, 2, 3};
  CHECK_THROWS_AS(Buffer::from_data<float>(ShapedArray(DType::f64, {3}), data), TypeError);
  CHECK_THROWS_AS(Buffer::from_data<float>(ShapedArray(DType::f32, {4}), data), TypeError);
  CHECK_THROWS_AS(Buffer::allocate(ShapedArray(DType::opaque, {2})), UnsupportedError);
}

TEST_CASE("Buffer: 16-bit floats store and read back") {
  Buffer h = Buffer::full(ShapedArray(DType::f16, {2}), 1.0 / 3.0);
  CHECK(h.nbytes() == 4);
  CHECK(h.as<uint16_t>()[0] == 0x3555);  // nearest half to 1/3
  CHECK(h.element(0) == Approx(0.333251953125));
  Buffer bf = Buffer::full(ShapedArray(DType::bf16, {}), 3.0);
  CHECK(bf.as<uint16_t>()[0] == 0x4040);
  CHECK(bf.element(0) == 3.0);
  Buffer big = Buffer::full(ShapedArray(DType::f16, {}), 1e6);
  CHECK(std::isinf(big.element(0)));
  Buffer tiny = Buffer::full(ShapedArray(DType::f16, {}), std::ldexp(1.0, -24));  // subnormal
  CHECK(tiny.as<uint16_t>()[0] == 1);
  CHECK(tiny.element(0) == std::ldexp(1.0, -24));
  std::vector<uint16_t> bits{0x3c00, 0xc000};
  Buffer raw = Buffer::from_data<uint16_t>(ShapedArray(DType::f16, {2}), bits);
  CHECK(vals(raw) == std::vector<double>{1.0, -2.0});
}

TEST_CASE("Buffer: from_const and to_const share storage") {
  Buffer a = f32({3}, {1, 2, 3});
  const size_t live = memory_stats().live_bytes;
  ConstValue c = a.to_const();
  CHECK(c.aval.str_short() == "f32[3]");
  CHECK(c.data.get() == a.data());
  Buffer back = Buffer::from_const(c);
  CHECK(back.data() == a.data());
  CHECK(vals(back) == std::vector<double>{1, 2, 3});
  CHECK(memory_stats().live_bytes == live);  // no copies

  ConstValue elided{ShapedArray(DType::f32, {3}), nullptr};
  CHECK_THROWS_AS(Buffer::from_const(elided), UnsupportedError);
}
