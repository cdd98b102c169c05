// The equations each cjax::numpy / cjax::nn op traces to, as jax.numpy / jax.nn trace them
// (derived from jax/_src/numpy/*.py, jax/_src/nn/functions.py and jax/_src/lax/*.py).
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::f32;
using cjax::testing::i32;

namespace {

template <class F, class... A>
std::string trace(F f, const A&... a) {
  return to_string(make_jaxpr(f)(a...));
}
}  // namespace

TEST_CASE("gelu traces to jax.nn.gelu's tanh approximation") {
  auto f = [](const Array& x) { return nn::gelu(x); };
  CHECK(trace(f, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:f32[3] = integer_pow[y=3] a
    c:f32[3] = mul 0.044714998453855515:f32[] b
    d:f32[3] = add a c
    e:f32[3] = mul 0.7978845834732056:f32[] d
    f:f32[3] = tanh e
    g:f32[3] = add 1.0:f32[] f
    h:f32[3] = mul 0.5:f32[] g
    i:f32[3] = mul a h
  in (i,) })");
  // The exact form ends in jnp.array(..., dtype=x.dtype): a copy (jax 0.11, checked against its
  // printout in custom_derivatives_test.cc).
  auto exact = [](const Array& x) { return nn::gelu(x, false); };
  CHECK(trace(exact, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:f32[3] = mul 0.5:f32[] a
    c:f32[3] = neg a
    d:f32[3] = mul c 0.7071067690849304:f32[]
    e:f32[3] = erfc d
    f:f32[3] = mul b e
    g:f32[3] = copy f
  in (g,) })");
}

TEST_CASE("relu, sigmoid and silu") {
  // relu is a custom_jvp function (JAX's printout: tests/frontend/custom_derivatives_test.cc).
  auto relu = [](const Array& x) { return nn::relu(x); };
  CHECK(trace(relu, f32({3})).find("custom_jvp_call[\n      name=relu") != std::string::npos);
  auto sig = [](const Array& x) { return nn::sigmoid(x); };
  CHECK(trace(sig, f32({3})) == "{ lambda ; a:f32[3]. let b:f32[3] = logistic a in (b,) }");
  auto silu = [](const Array& x) { return nn::silu(x); };
  CHECK(trace(silu, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=silu
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = logistic a
          b:f32[3] = mul a c
        in (b,) }
    ] a
  in (b,) })");
}

TEST_CASE("reductions") {
  auto sum = [](const Array& x) { return np::sum(x); };
  CHECK(trace(sum, f32({2, 3})) ==
        R"({ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
  in (b,) })");
  // Bools are summed as int32; f16 is summed in f32.
  CHECK(trace(sum, ShapeDtype{DType::bool_, {3}}) == R"({ lambda ; a:bool[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = reduce_sum[axes=(0,) out_sharding=None] b
  in (c,) })");
  CHECK(trace(sum, ShapeDtype{DType::f16, {3}}) == R"({ lambda ; a:f16[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f16[] = convert_element_type[new_dtype=float16 weak_type=False] c
  in (d,) })");
  auto mean = [](const Array& x) { return np::mean(x, -1, true); };
  CHECK(trace(mean, f32({2, 3})) == R"({ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a
    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    d:f32[2,1] = div c 3.0:f32[]
  in (d,) })");
  auto imean = [](const Array& x) { return np::mean(x); };
  CHECK(trace(imean, i32({4})) == R"({ lambda ; a:i32[4]. let
    b:f32[4] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[] = div c 4.0:f32[]
  in (d,) })");
  auto mx = [](const Array& x) { return np::max(x, 0); };
  CHECK(trace(mx, f32({2, 3})) ==
        R"({ lambda ; a:f32[2,3]. let
    b:f32[3] = reduce_max[axes=(0,) out_sharding=None] a
  in (b,) })");
  auto am = [](const Array& x) { return np::argmax(x, 1); };
  CHECK(trace(am, f32({2, 3})) ==
        R"({ lambda ; a:f32[2,3]. let
    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a
  in (b,) })");
}

TEST_CASE("dot and matmul") {
  auto dot = [](const Array& a, const Array& b) { return np::dot(a, b); };
  CHECK(trace(dot, f32({3}), f32({3})) == R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) })");
  CHECK(trace(dot, f32({2, 3}), f32({3, 4})) == R"({ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) })");
  auto matmul = [](const Array& a, const Array& b) { return np::matmul(a, b); };
  CHECK(trace(matmul, f32({2, 3, 4}), f32({2, 4, 5})) ==
        R"({ lambda ; a:f32[2,3,4] b:f32[2,4,5]. let
    c:f32[2,3,5] = dot_general[
      dimension_numbers=(([2], [1]), ([0], [0]))
      preferred_element_type=float32
    ] a b
  in (c,) })");
  // A batch dim against a missing one is a free dim; size-1 batch dims are squeezed.
  CHECK(trace(matmul, f32({1, 3, 4}), f32({2, 4, 5})) ==
        R"({ lambda ; a:f32[1,3,4] b:f32[2,4,5]. let
    c:f32[3,4] = squeeze[dimensions=(0,)] a
    d:f32[3,2,5] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] c b
    e:f32[2,3,5] = transpose[permutation=(1, 0, 2)] d
  in (e,) })");
  CHECK(trace(matmul, f32({4}), f32({2, 4, 5})) == R"({ lambda ; a:f32[4] b:f32[2,4,5]. let
    c:f32[2,5] = dot_general[
      dimension_numbers=(([0], [1]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) })");
}

TEST_CASE("shape ops") {
  auto reshape = [](const Array& a) { return np::reshape(a, {3, -1}); };
  CHECK(trace(reshape, f32({2, 3})) ==
        R"({ lambda ; a:f32[2,3]. let
    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a
  in (b,) })");
  auto tr = [](const Array& a) { return a.T(); };
  CHECK(trace(tr, f32({2, 3})) ==
        R"({ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
  in (b,) })");
  auto sq = [](const Array& a) { return np::squeeze(a); };
  CHECK(trace(sq, f32({1, 3, 1})) ==
        "{ lambda ; a:f32[1,3,1]. let b:f32[3] = squeeze[dimensions=(0, 2)] a in (b,) }");
  auto cat = [](const Array& a, const Array& b) { return np::concatenate({a, b}, 0); };
  CHECK(trace(cat, i32({2}), f32({3})) == R"({ lambda ; a:i32[2] b:f32[3]. let
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[5] = concatenate[dimension=0] c b
  in (d,) })");
  auto ed = [](const Array& a) { return np::expand_dims(a, {0, 2}); };
  CHECK(trace(ed, f32({3})) ==
        R"({ lambda ; a:f32[3]. let
    b:f32[1,3,1] = broadcast_in_dim[broadcast_dimensions=(1,)] a
  in (b,) })");
}

TEST_CASE("creation ops inside a trace are staged") {
  auto ones = [](const Array& a) { return a + np::ones({3}); };
  CHECK(trace(ones, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:f32[3] = broadcast_in_dim 1.0:f32[]
    c:f32[3] = add a b
  in (c,) })");
  auto zl = [](const Array& a) { return np::zeros_like(a); };
  CHECK(trace(zl, f32({3})) ==
        "{ lambda ; a:f32[3]. let b:f32[3] = broadcast_in_dim 0.0:f32[] in (b,) }");
  auto ar = [](const Array& a) { return a + np::arange(3); };
  CHECK(trace(ar, i32({3})) == R"({ lambda ; a:i32[3]. let
    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    c:i32[3] = add a b
  in (c,) })");
  auto ar3 = [](const Array& a) { return a * np::arange(1, 10, 3); };
  CHECK(trace(ar3, i32({3})) == R"({ lambda ; a:i32[3]. let
    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    c:i32[3] = mul 3:i32[] b
    d:i32[3] = add 1:i32[] c
    e:i32[3] = mul a d
  in (e,) })");
  // A scalar full is a literal, not an equation.
  auto scalar = [](const Array& a) { return a * np::full({}, 2.0); };
  CHECK(trace(scalar, f32({3})) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }");
}

TEST_CASE("elementwise math") {
  auto pw = [](const Array& a) { return np::power(a, 2); };
  CHECK(trace(pw, f32({3})) == "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=2] a in (b,) }");
  auto fpw = [](const Array& a) { return np::power(a, 2.5); };
  CHECK(trace(fpw, f32({3})) == "{ lambda ; a:f32[3]. let b:f32[3] = pow a 2.5:f32[] in (b,) }");
  auto rec = [](const Array& a) { return np::reciprocal(a); };
  CHECK(trace(rec, i32({3})) == R"({ lambda ; a:i32[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[3] = integer_pow[y=-1] b
  in (c,) })");
  auto sqrt_int = [](const Array& a) { return np::sqrt(a); };
  CHECK(trace(sqrt_int, i32({3})) == R"({ lambda ; a:i32[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[3] = sqrt b
  in (c,) })");
  auto absu = [](const Array& a) { return np::abs(a); };
  CHECK(trace(absu, ShapeDtype{DType::u8, {3}}) == "{ lambda ; a:u8[3]. let  in (a,) }");
  // Named temporaries: C++ does not fix the order in which function arguments are evaluated.
  auto cmp = [](const Array& a) {
    Array pos = a > 0;
    Array small = a <= 1;
    return np::logical_and(pos, small);
  };
  CHECK(trace(cmp, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:bool[3] = gt a 0.0:f32[]
    c:bool[3] = le a 1.0:f32[]
    d:bool[3] = and b c
  in (d,) })");
  auto bool_add = [](const Array& a, const Array& b) { return a + b; };
  CHECK(trace(bool_add, ShapeDtype{DType::bool_, {2}}, ShapeDtype{DType::bool_, {2}}) ==
        "{ lambda ; a:bool[2] b:bool[2]. let c:bool[2] = or a b in (c,) }");
  auto cast = [](const Array& a) { return a.astype(DType::bf16); };
  CHECK(trace(cast, f32({2})) ==
        "{ lambda ; a:f32[2]. let\n    b:bf16[2] = convert_element_type[new_dtype=bfloat16 "
        "weak_type=False] a\n  in (b,) }");
}

TEST_CASE("where is jitted like jnp.where") {
  auto w = [](const Array& x) { return np::where(x > 0, x, 0.0); };
  CHECK(trace(w, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:bool[3] = gt a 0.0:f32[]
    c:f32[3] = jit[
      name=_where
      jaxpr={ lambda ; b:bool[3] a:f32[3] d:f32[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          f:f32[3] = broadcast_in_dim e
          c:f32[3] = select_n b f a
        in (c,) }
    ] b a 0.0:f32[]
  in (c,) })");
  // Eagerly, where runs inline.
  Array r = np::where(array({true, false, true}), array({1.f, 2.f, 3.f}), 9.0);
  CHECK(r.to_vector<double>() == std::vector<double>{1, 9, 3});
}

TEST_CASE("indexing") {
  auto first = [](const Array& a) { return a[0]; };
  CHECK(trace(first, f32({3})) == R"({ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) })");
  auto tail = [](const Array& a) { return a[{ellipsis, slice(-2, std::nullopt)}]; };
  CHECK(trace(tail, f32({2, 5})) == R"({ lambda ; a:f32[2,5]. let
    b:f32[2,2] = slice[limit_indices=(2, 5) start_indices=(0, 3) strides=None] a
  in (b,) })");
  auto strided = [](const Array& a) { return a[slice(0, std::nullopt, 2)]; };
  CHECK(trace(strided, f32({5})) == R"({ lambda ; a:f32[5]. let
    b:f32[3] = slice[limit_indices=(5,) start_indices=(0,) strides=(2,)] a
  in (b,) })");
  auto whole = [](const Array& a) { return a[{all, newaxis}]; };
  CHECK(trace(whole, f32({3})) ==
        R"({ lambda ; a:f32[3]. let
    b:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
  in (b,) })");
  auto dyn = [](const Array& a, const Array& i) { return a[i]; };
  CHECK(trace(dyn, f32({5}), i32({})) == R"({ lambda ; a:f32[5] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 5:i32[]
    e:i32[] = select_n c b d
    f:f32[1] = dynamic_slice[slice_sizes=(1,)] a e
    g:f32[] = squeeze[dimensions=(0,)] f
  in (g,) })");
  auto ds = [](const Array& a, const Array& i) { return lax::dynamic_slice(a, {{i, 0}}, {2, 3}); };
  CHECK(trace(ds, f32({4, 3}), i32({})) == R"({ lambda ; a:f32[4,3] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 4:i32[]
    e:i32[] = select_n c b d
    f:f32[2,3] = dynamic_slice[slice_sizes=(2, 3)] a e 0:i32[]
  in (f,) })");
  CHECK_THROWS_AS(make_jaxpr(first)(f32({})), TypeError);
  CHECK_THROWS_WITH(make_jaxpr([](const Array& a) { return a[7]; })(f32({3})),
                    Catch::Contains("index 7 out of bounds for axis 0 with size 3"));
}
