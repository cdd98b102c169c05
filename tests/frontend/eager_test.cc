// Without a trace, ops run eagerly through the reference interpreter.
#include <catch2/catch.hpp>

#include <cmath>

#include "cjax/api.h"

using namespace cjax;
using Catch::Matchers::WithinAbs;

namespace {
std::vector<double> vals(const Array& a) {
  return a.to_vector<double>();
}
}  // namespace

TEST_CASE("arrays from data") {
  Array a = array({1.f, 2.f, 3.f});
  CHECK(a.is_concrete());
  CHECK(a.aval().str_short() == "f32[3]");
  CHECK_FALSE(a.weak_type());
  Array m = array({{1, 2, 3}, {4, 5, 6}});
  CHECK(m.aval().str_short() == "i32[2,3]");
  CHECK(array(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}).aval().str_short() == "f32[2,2]");
  CHECK(array(std::vector<double>{1, 2}, std::nullopt, DType::f64).dtype() == DType::f64);
  Array h = array({1.5f, -2.f}, DType::bf16);
  CHECK(h.dtype() == DType::bf16);
  CHECK(vals(h) == std::vector<double>{1.5, -2});
  CHECK(array({true, false}).dtype() == DType::bool_);
  CHECK(array(std::vector<uint8_t>{1, 2}).dtype() == DType::u8);
  CHECK_THROWS_AS(array(std::vector<float>{1, 2, 3}, Shape{2, 2}), TypeError);
  CHECK(Array(2.5).item() == 2.5);
  CHECK(m.size() == 6);
  CHECK(m.ndim() == 2);
}

TEST_CASE("elementwise ops and operators") {
  Array a = array({1.f, 2.f, 3.f}), b = array({4.f, 5.f, 6.f});
  CHECK(vals(a + b) == std::vector<double>{5, 7, 9});
  CHECK(vals(a - b) == std::vector<double>{-3, -3, -3});
  CHECK(vals(a * b) == std::vector<double>{4, 10, 18});
  CHECK(vals(b / 2) == std::vector<double>{2, 2.5, 3});
  CHECK(vals(-a) == std::vector<double>{-1, -2, -3});
  CHECK(vals(2.0 * a + 1) == std::vector<double>{3, 5, 7});
  CHECK(vals(np::maximum(a, 2)) == std::vector<double>{2, 2, 3});
  CHECK(vals(np::square(a)) == std::vector<double>{1, 4, 9});
  CHECK(vals(np::power(a, 3)) == std::vector<double>{1, 8, 27});
  CHECK(vals(a < 2.5) == std::vector<double>{1, 1, 0});
  CHECK((a < 2.5).dtype() == DType::bool_);
  Array s = np::sin(a);
  for (int i = 0; i < 3; ++i)
    CHECK_THAT(s.to_vector<double>()[i], WithinAbs(std::sin(i + 1.0), 1e-6));
  CHECK_THAT(np::exp(Array(1.0)).item(), WithinAbs(std::exp(1.0), 1e-6));
  CHECK(vals(np::abs(array({-1, 2, -3}))) == std::vector<double>{1, 2, 3});
  Array c = a;
  c += 1;
  c *= 2;
  CHECK(vals(c) == std::vector<double>{4, 6, 8});
  CHECK(vals(a) == std::vector<double>{1, 2, 3});  // arrays are values
  // Integer division promotes to float, as jnp.true_divide.
  Array q = array({1, 2, 3}) / 2;
  CHECK(q.dtype() == DType::f32);
  CHECK(vals(q) == std::vector<double>{0.5, 1, 1.5});
}

TEST_CASE("weak types propagate eagerly") {
  Array w = Array(1.0) + 2;
  CHECK(w.weak_type());
  CHECK(w.item() == 3.0);
  Array s = array({1.f}) + 2;
  CHECK_FALSE(s.weak_type());
  Array f = array({1, 2}) + 0.5;
  CHECK(f.dtype() == DType::f32);
  CHECK(f.weak_type());
}

TEST_CASE("reductions, dot and matmul") {
  Array m = array({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  CHECK(np::sum(m).item() == 21);
  CHECK(vals(np::sum(m, 0)) == std::vector<double>{5, 7, 9});
  CHECK(np::sum(m, 1, true).shape() == Shape{2, 1});
  CHECK(vals(np::mean(m, 1)) == std::vector<double>{2, 5});
  CHECK(np::max(m).item() == 6);
  CHECK(vals(np::min(m, 1)) == std::vector<double>{1, 4});
  CHECK(vals(np::argmax(m, 1)) == std::vector<double>{2, 2});
  CHECK(np::prod(array({1, 2, 3, 4})).item() == 24);
  Array v = array({1.f, 0.f, -1.f});
  CHECK(vals(np::dot(m, v)) == std::vector<double>{-2, -2});
  CHECK(np::dot(v, v).item() == 2);
  Array mt = np::matmul(m, m.T());
  CHECK(mt.shape() == Shape{2, 2});
  CHECK(vals(mt) == std::vector<double>{14, 32, 32, 77});
  Array batch = np::matmul(np::ones({3, 2, 4}), np::ones({4, 5}));
  CHECK(batch.shape() == Shape{3, 2, 5});
  CHECK(vals(batch)[0] == 4);
}

TEST_CASE("shape ops and indexing") {
  Array a = np::arange(6).reshape({2, 3});
  CHECK(vals(a) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(vals(a.T()) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(vals(a[1]) == std::vector<double>{3, 4, 5});
  CHECK(a[{1, 2}].item() == 5);
  CHECK(a[{-1, -1}].item() == 5);
  CHECK(vals(a[{all, slice(1, std::nullopt)}]) == std::vector<double>{1, 2, 4, 5});
  CHECK(a[{newaxis, ellipsis}].shape() == Shape{1, 2, 3});
  CHECK(vals(a[Array(1)]) == std::vector<double>{3, 4, 5});
  CHECK(vals(a[array(-1)]) == std::vector<double>{3, 4, 5});
  CHECK(vals(np::concatenate({a, a}, 1)) ==
        std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  CHECK(np::stack({a, a}).shape() == Shape{2, 2, 3});
  CHECK(vals(np::squeeze(np::zeros({1, 2}))) == std::vector<double>{0, 0});
  CHECK(vals(np::arange(1.0, 2.0, 0.25)) == std::vector<double>{1, 1.25, 1.5, 1.75});
  CHECK(np::arange(5).dtype() == DType::i32);
  CHECK(vals(np::full({2}, 7)) == std::vector<double>{7, 7});
  CHECK(np::full({2}, 7).weak_type());
  CHECK(vals(np::ones_like(a)) == std::vector<double>(6, 1));
  CHECK(vals(np::clip(array({-1.f, 0.5f, 2.f}), 0.0, 1.0)) == std::vector<double>{0, 0.5, 1});
}

TEST_CASE("activations evaluate") {
  Array x = array({-1.f, 0.f, 2.f});
  CHECK(vals(nn::relu(x)) == std::vector<double>{0, 0, 2});
  std::vector<double> g = vals(nn::gelu(x));
  auto ref = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  for (int i = 0; i < 3; ++i) CHECK_THAT(g[i], WithinAbs(ref(x.to_vector<double>()[i]), 1e-5));
  CHECK_THAT(nn::sigmoid(Array(0.0)).item(), WithinAbs(0.5, 1e-7));
}

TEST_CASE("arrays print like JAX arrays") {
  CHECK(np::sin(array({1.f, 2.f, 3.f})).to_string() ==
        "Array([0.84147096, 0.9092974 , 0.14112   ], dtype=float32)");
  CHECK(array({{1.f, 2.5f}, {3.f, 4.f}}).to_string() ==
        "Array([[1. , 2.5],\n       [3. , 4. ]], dtype=float32)");
  CHECK((Array(1.0) + 2).to_string() == "Array(3., dtype=float32, weak_type=True)");
  CHECK(array({1, 20, 3}).to_string() == "Array([ 1, 20,  3], dtype=int32)");
  CHECK(array({true, false}).to_string() == "Array([ True, False], dtype=bool)");
  CHECK(array({1e-5f, 1.f}).to_string() == "Array([1.e-05, 1.e+00], dtype=float32)");
  CHECK(array({-1.5f, 2.f, NAN}).to_string() == "Array([-1.5,  2. ,  nan], dtype=float32)");
  std::ostringstream os;
  os << array({0.5f});
  CHECK(os.str() == "Array([0.5], dtype=float32)");
}
