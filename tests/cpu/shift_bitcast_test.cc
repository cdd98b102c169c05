// Shifts and same-width bitcasts compiled natively against the interpreter: amounts of the bit
// width or more, and negative ones, give lax's (XLA's) answers, not LLVM's poison.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "cjax/api.h"
#include "cjax/cjax.h"

namespace cjax {
namespace shift_bitcast_test {

template <class T>
Array of(std::vector<T> v, DType t) {
  return Array::from_buffer(runtime::Buffer::from_data<T>(ShapedArray(t, {int64_t(v.size())}), v));
}

void check_same(const Array& got, const Array& want) {
  REQUIRE(got.aval().str_short() == want.aval().str_short());
  CHECK(std::memcmp(got.buffer().data(), want.buffer().data(), want.buffer().nbytes()) == 0);
}

template <class F>
void compiled_equals_interpreted(F f, const Array& x, const Array& y) {
  Array want;
  {
    UseInterpreter interp;
    want = f(x, y);
  }
  check_same(jit(f)(x, y), want);
}

TEST_CASE("compiled shifts give lax's results for every amount") {
  const std::vector<int32_t> amounts{0, 1, 5, 31, 32, 33, 100, -1, -32};
  const size_t n = amounts.size();
  const Array xi = of<int32_t>(std::vector<int32_t>(n, -123456789), DType::i32);
  const Array ai = of<int32_t>(amounts, DType::i32);
  std::vector<uint32_t> ua;
  for (int32_t a : amounts) ua.push_back(uint32_t(a));
  const Array xu = of<uint32_t>(std::vector<uint32_t>(n, 0xF0F0F0F5u), DType::u32);
  const Array au = of<uint32_t>(ua, DType::u32);
  for (const auto& [x, a] : {std::pair{xi, ai}, std::pair{xu, au}}) {
    INFO(x.aval().str_short());
    compiled_equals_interpreted(
        [](const Array& v, const Array& s) { return lax::shift_left(v, s); }, x, a);
    compiled_equals_interpreted(
        [](const Array& v, const Array& s) { return lax::shift_right_logical(v, s); }, x, a);
    compiled_equals_interpreted(
        [](const Array& v, const Array& s) { return lax::shift_right_arithmetic(v, s); }, x, a);
  }
  // The interpreter's own answers, spelled out for -123456789 >> 40 (arithmetic): the sign.
  UseInterpreter interp;
  CHECK(lax::shift_right_arithmetic(Array::scalar(-123456789, DType::i32),
                                    Array::scalar(40, DType::i32))
            .item() == -1.0);
  CHECK(lax::shift_left(Array::scalar(3, DType::u32), Array::scalar(32, DType::u32)).item() == 0.0);
}

TEST_CASE("compiled bitcasts between dtypes of one width keep the bits") {
  const Array f = of<float>({1.0f, -0.0f, 3.5e-39f, 1e30f}, DType::f32);
  for (const DType t : {DType::u32, DType::i32}) {
    Array want;
    {
      UseInterpreter interp;
      want = lax::bitcast_convert_type(f, t);
    }
    const Array got = jit([t](const Array& v) { return lax::bitcast_convert_type(v, t); })(f);
    check_same(got, want);
    check_same(jit([](const Array& v) { return lax::bitcast_convert_type(v, DType::f32); })(got),
               f);
  }
}

}  // namespace shift_bitcast_test
}  // namespace cjax
