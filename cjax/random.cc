#include "cjax/random.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy_util.h"
#include "cjax/random_internal.h"
#include "ir/errors.h"
#include "runtime/threefry.h"

namespace cjax::random {
namespace {

Params fry() {
  return Params{{"impl", std::string("fry")}};
}

// JAX's _check_prng_key: a typed key as it is, a raw u32[..., 2] one wrapped (the result is then
// unwrapped again by result_keys).
struct CheckedKey {
  Array key;
  bool raw = false;
};
CheckedKey check_key(const char* fn, const Array& k, const SourceInfo& src) {
  if (k.dtype() == DType::key_fry) return {k, false};
  if (k.dtype() == DType::u32 && k.ndim() >= 1 && k.shape().back() == 2)
    return {wrap_key_data(k, src), true};
  throw TypeError(fmt::format(
      "{}: expected a PRNG key array (key<fry>[...], or a raw u32[..., 2] key), got {} ({})", fn,
      k.aval().str_short(), src.summarize()));
}

Array result_keys(const Array& keys, bool raw, const SourceInfo& src) {
  return raw ? key_data(keys, src) : keys;
}

void expect_single_key(const char* fn, const Array& k, const SourceInfo& src) {
  if (k.ndim() != 0)
    throw TypeError(fmt::format(
        "{} accepts a single key, but was given a key array of shape {} != (). Use jax.vmap for "
        "batching. ({})",
        fn, shape_str(k.shape()), src.summarize()));
}

}  // namespace

namespace detail {

Array single_key(const char* fn, const Array& k, const SourceInfo& src) {
  const CheckedKey checked = check_key(fn, k, src);
  expect_single_key(fn, checked.key, src);
  return checked.key;
}

// A strongly typed scalar constant of `dtype` (numpy's np.array(v, dtype)).
Array constant(double v, DType dtype, const SourceInfo& src) {
  return lax::convert_element_type(v, dtype, false, src);
}

Array random_bits(const Array& key, int bit_width, const Shape& shape, const SourceInfo& src) {
  return cjax::bind1("random_bits", {key},
                     Params{{"bit_width", int64_t{bit_width}}, {"shape", ParamValue::ints(shape)}},
                     src);
}

Array jitted(const char* name, const std::function<Array(std::span<const Array>)>& body,
             std::vector<Array> args, const SourceInfo& src) {
  auto impl = [&body](std::span<const Array> a) -> std::vector<Array> { return {body(a)}; };
  return numpy::detail::call_jitted(name, impl, args, src).at(0);
}

std::pair<Array, Array> split2(const Array& key, const SourceInfo& src) {
  const Array keys = split(key, 2, src);
  auto take = [&](int64_t i) {
    return lax::squeeze(lax::slice(keys, {i}, {i + 1}, std::nullopt, src), {0}, src);
  };
  return {take(0), take(1)};
}

}  // namespace detail

using namespace detail;

namespace {

struct FloatBits {
  int nbits, nmant;
  DType uint;
};
FloatBits float_bits(DType t, const SourceInfo& src) {
  switch (t) {
    case DType::f16:
      return {16, 10, DType::u16};
    case DType::bf16:
      return {16, 7, DType::u16};
    case DType::f32:
      return {32, 23, DType::u32};
    case DType::f64:
      return {64, 52, DType::u64};
    default:
      throw TypeError(fmt::format("uniform only accepts floating point dtypes, got {} ({})",
                                  long_name(t), src.summarize()));
  }
}

// JAX's _uniform (jitted, shape and dtype static): random mantissa bits under the exponent of
// 1.0, read as floats in [1, 2), shifted and scaled to [minval, maxval).
Array uniform_body(const Array& key, const Array& minval, const Array& maxval, const Shape& shape,
                   DType dtype, const SourceInfo& src) {
  const FloatBits fb = float_bits(dtype, src);
  Array lo = lax::convert_element_type(minval, dtype, false, src);
  Array hi = lax::convert_element_type(maxval, dtype, false, src);
  lo = lax::broadcast_to_rank(lo, int64_t(shape.size()), src);
  hi = lax::broadcast_to_rank(hi, int64_t(shape.size()), src);
  const int rng_bits = fb.nmant < 8 ? 8 : fb.nbits;
  Array b = random_bits(key, rng_bits, shape, src);
  if (rng_bits != fb.nbits) b = lax::convert_element_type(b, fb.uint, false, src);
  const Array shift = constant(double(rng_bits - fb.nmant), fb.uint, src);
  const double one_bits = dtype == DType::f64   ? double(0x3FF0000000000000ull)
                          : dtype == DType::f32 ? double(0x3F800000u)
                          : dtype == DType::f16 ? double(0x3C00u)
                                                : double(0x3F80u);
  const Array mantissa = lax::shift_right_logical(b, shift, src);
  const Array float_words = lax::bitwise_or(mantissa, constant(one_bits, fb.uint, src), src);
  const Array in_one_two = lax::bitcast_convert_type(float_words, dtype, src);
  const Array floats = lax::sub(in_one_two, constant(1.0, dtype, src), src);
  const Array span = lax::sub(hi, lo, src);
  const Array scaled = lax::mul(floats, span, src);
  const Array shifted = lax::add(scaled, lo, src);
  return lax::max(lo, shifted, src);
}

}  // namespace

bool threefry_partitionable() {
  return runtime::threefry_partitionable();
}

void set_threefry_partitionable(bool on) {
  runtime::set_threefry_partitionable(on);
}

Array key(const Array& seed, SourceInfo src) {
  if (!is_integer(seed.dtype()) || seed.ndim() != 0)
    throw TypeError(fmt::format("key: the seed must be an integer scalar, got {} ({})",
                                seed.aval().str_short(), src.summarize()));
  // A Python int seed is taken modulo 2^32, as JAX does with 64-bit types disabled.
  Array s = seed;
  if (seed.is_python_scalar())
    s = lax::convert_element_type(
        double(static_cast<int32_t>(static_cast<uint32_t>(seed.item<int64_t>()))), DType::i32,
        false, src);
  return cjax::bind1("random_seed", {s}, fry(), src);
}

Array PRNGKey(const Array& seed, SourceInfo src) {
  return key_data(key(seed, src), src);
}

Array key_data(const Array& keys, SourceInfo src) {
  if (keys.dtype() != DType::key_fry)
    throw TypeError(fmt::format("key_data: expected a typed key array (key<fry>), got {} ({})",
                                keys.aval().str_short(), src.summarize()));
  return cjax::bind1("random_unwrap", {keys}, {}, src);
}

Array wrap_key_data(const Array& data, SourceInfo src) {
  return cjax::bind1("random_wrap", {data}, fry(), src);
}

Array split(const Array& key, int64_t num, SourceInfo src) {
  return split(key, Shape{num}, src);
}

Array split(const Array& key, const Shape& shape, SourceInfo src) {
  const CheckedKey k = check_key("split", key, src);
  expect_single_key("split", k.key, src);
  return result_keys(
      cjax::bind1("random_split", {k.key}, Params{{"shape", ParamValue::ints(shape)}}, src), k.raw,
      src);
}

Array fold_in(const Array& key, const Array& data, SourceInfo src) {
  const CheckedKey k = check_key("fold_in", key, src);
  if (data.ndim() != 0)
    throw TypeError(fmt::format("fold_in accepts a scalar, but was given an array of shape {} ({})",
                                shape_str(data.shape()), src.summarize()));
  const Array msg = lax::convert_element_type(data, DType::u32, false, src);
  return result_keys(cjax::bind1("random_fold_in", {k.key, msg}, {}, src), k.raw, src);
}

Array bits(const Array& key, const Shape& shape, DType dtype, SourceInfo src) {
  const Array k = single_key("bits", key, src);
  if (!is_unsigned_integer(dtype))
    throw TypeError(fmt::format("bits: dtype argument must be an unsigned int dtype, got {} ({})",
                                long_name(dtype), src.summarize()));
  return random_bits(k, int(itemsize(dtype) * 8), shape, src);
}

Array uniform(const Array& key, const Shape& shape, DType dtype, const Array& minval,
              const Array& maxval, SourceInfo src) {
  const Array k = single_key("uniform", key, src);
  float_bits(dtype, src);
  auto body = [&](std::span<const Array> a) {
    return uniform_body(a[0], a[1], a[2], shape, dtype, src);
  };
  return jitted("_uniform", body, {k, minval, maxval}, src);
}

Array normal(const Array& key, const Shape& shape, DType dtype, SourceInfo src) {
  const Array k = single_key("normal", key, src);
  float_bits(dtype, src);
  // _normal_real: erf_inv of a uniform in (nextafter(-1, 0), 1), times sqrt(2).
  auto real = [&](std::span<const Array> a) {
    // The float after -1 toward 0, in the dtype (a half's ulp there is 2^-11, bfloat16's 2^-8).
    const double lo = dtype == DType::f64   ? std::nextafter(-1.0, 0.0)
                      : dtype == DType::f32 ? double(std::nextafter(-1.0f, 0.0f))
                      : dtype == DType::f16 ? -1.0 + std::ldexp(1.0, -11)
                                            : -1.0 + std::ldexp(1.0, -8);
    const Array u =
        uniform(a[0], shape, dtype, constant(lo, dtype, src), constant(1.0, dtype, src), src);
    const Array root2 = constant(std::sqrt(2.0), dtype, src);
    return lax::mul(root2, lax::erf_inv(u, src), src);
  };
  auto outer = [&](std::span<const Array> a) { return jitted("_normal_real", real, {a[0]}, src); };
  return jitted("_normal", outer, {k}, src);
}

}  // namespace cjax::random
