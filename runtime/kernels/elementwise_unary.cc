// Elementwise unary primitives: out[i] = f(in[i]), one input of the output's shape.
#include <bit>
#include <cmath>

#include "runtime/kernels/erf_inv.h"
#include "runtime/kernels/int_math.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// One operand of the output's shape; the output's dtype is the operand's unless `bool_out`.
void check_unary(std::span<const Buffer> in, std::span<Buffer> out, bool bool_out = false) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const DType want = bool_out ? DType::bool_ : in[0].aval().dtype;
  if (in[0].aval().shape != out[0].aval().shape || out[0].aval().dtype != want)
    kernel_type_error("operand {} does not match the output {}", in[0].aval().str_short(),
                      out[0].aval().str_short());
}

// Applies Op::f<T> elementwise; Op::kTypes lists the accepted dtypes.
template <class Op>
void unary_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_unary(in, out);
  dispatch_op<Op::kTypes>(in[0].aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    for (int64_t i = 0, n = in[0].aval().size(); i < n; ++i) y[i] = Op::template f<T>(x[i]);
  });
}

#define CJAX_FLOAT_UNARY(NAME, EXPR)           \
  struct NAME {                                \
    static constexpr DTypeSet kTypes = kFloat; \
    template <class T>                         \
    static T f(T x) {                          \
      return EXPR;                             \
    }                                          \
  };
CJAX_FLOAT_UNARY(Sin, std::sin(x))
CJAX_FLOAT_UNARY(Cos, std::cos(x))
CJAX_FLOAT_UNARY(Tan, std::tan(x))
CJAX_FLOAT_UNARY(Asin, std::asin(x))
CJAX_FLOAT_UNARY(Acos, std::acos(x))
CJAX_FLOAT_UNARY(Atan, std::atan(x))
CJAX_FLOAT_UNARY(Sinh, std::sinh(x))
CJAX_FLOAT_UNARY(Cosh, std::cosh(x))
CJAX_FLOAT_UNARY(Tanh, std::tanh(x))
CJAX_FLOAT_UNARY(Asinh, std::asinh(x))
CJAX_FLOAT_UNARY(Acosh, std::acosh(x))
CJAX_FLOAT_UNARY(Atanh, std::atanh(x))
CJAX_FLOAT_UNARY(Exp, std::exp(x))
CJAX_FLOAT_UNARY(Exp2, std::exp2(x))
CJAX_FLOAT_UNARY(Log, std::log(x))
CJAX_FLOAT_UNARY(Log1p, std::log1p(x))
CJAX_FLOAT_UNARY(Expm1, std::expm1(x))
CJAX_FLOAT_UNARY(Sqrt, std::sqrt(x))
CJAX_FLOAT_UNARY(Rsqrt, T(1) / std::sqrt(x))
CJAX_FLOAT_UNARY(Cbrt, std::cbrt(x))
// Written so that exp never overflows: 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below.
CJAX_FLOAT_UNARY(Logistic,
                 x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x)))
CJAX_FLOAT_UNARY(Erf, std::erf(x))
CJAX_FLOAT_UNARY(Erfc, std::erfc(x))
CJAX_FLOAT_UNARY(Lgamma, std::lgamma(x))
CJAX_FLOAT_UNARY(ErfInv,
                 T(std::is_same_v<T, float> ? erf_inv_f32(float(x)) : erf_inv_f64(double(x))))
CJAX_FLOAT_UNARY(Floor, std::floor(x))
CJAX_FLOAT_UNARY(Ceil, std::ceil(x))
#undef CJAX_FLOAT_UNARY

struct Neg {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T f(T x) {
    if constexpr (std::is_integral_v<T>)
      return wrap_neg(x);
    else
      return -x;
  }
};

struct Abs {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T f(T x) {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else if constexpr (std::is_integral_v<T>)
      return x < 0 ? wrap_neg(x) : x;  // abs(INT_MIN) wraps to INT_MIN, as in XLA
    else
      return std::fabs(x);
  }
};

struct Sign {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T f(T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x) || x == T(0)) return x;  // NaN, and zero keeps its sign
    if (x > T(0)) return T(1);
    if constexpr (std::is_signed_v<T>)
      if (x < T(0)) return T(-1);
    return T(0);
  }
};

struct Square {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T f(T x) {
    if constexpr (std::is_integral_v<T>)
      return wrap_mul(x, x);
    else
      return x * x;
  }
};

struct Not {
  static constexpr DTypeSet kTypes = kIntBool;
  template <class T>
  static T f(T x) {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else
      return static_cast<T>(~x);
  }
};

struct PopulationCount {
  static constexpr DTypeSet kTypes = kInt;
  template <class T>
  static T f(T x) {
    return static_cast<T>(std::popcount(static_cast<std::make_unsigned_t<T>>(x)));
  }
};

void is_finite_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_unary(in, out, true);
  dispatch_op<kFloat>(in[0].aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    bool* y = out[0].as<bool>();
    for (int64_t i = 0, n = in[0].aval().size(); i < n; ++i) y[i] = std::isfinite(x[i]);
  });
}

// integer_pow[y]: x^y by repeated squaring; a negative y (floats only) gives 1 / x^-y.
void integer_pow_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_unary(in, out);
  const int64_t y = params.get_int("y");
  dispatch_op<kNumeric>(in[0].aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    T* r = out[0].as<T>();
    const int64_t n = in[0].aval().size();
    if constexpr (std::is_integral_v<T>) {
      if (y < 0) kernel_type_error("negative exponent {} for integer dtype", y);
      for (int64_t i = 0; i < n; ++i) r[i] = int_pow(x[i], static_cast<uint64_t>(y));
    } else {
      const uint64_t m = y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y);
      for (int64_t i = 0; i < n; ++i) {
        T acc = T(1), b = x[i];
        for (uint64_t e = m; e; e >>= 1) {
          if (e & 1) acc *= b;
          if (e > 1) b *= b;
        }
        r[i] = y < 0 ? T(1) / acc : acc;
      }
    }
  });
}

// reduce_precision[exponent_bits mantissa_bits]: rounds to the nearest value of a float format
// with that many bits (ties to even), overflowing to inf and flushing values below its smallest
// normal to zero, as XLA does. Works on the bits of the f32/f64 value.
template <class T, class U, int kMantBits, int kExpBits>
T reduce_precision_one(T x, int64_t exp_bits, int64_t mant_bits) {
  if (std::isnan(x)) return x;
  U bits = std::bit_cast<U>(x);
  if (mant_bits < kMantBits) {
    const int shift = kMantBits - static_cast<int>(mant_bits);
    const U last_bit_mask = U{1} << shift;
    const U base_bias = (last_bit_mask >> 1) - 1;
    const U last_bit = (bits & last_bit_mask) >> shift;
    bits = (bits + last_bit + base_bias) & ~(last_bit_mask - 1);
  }
  if (exp_bits < kExpBits) {
    const U sign_mask = U{1} << (kMantBits + kExpBits);
    const U exp_mask = ((U{1} << kExpBits) - 1) << kMantBits;
    const U bias = (U{1} << (kExpBits - 1)) - 1;
    const U reduced_bias = (U{1} << (exp_bits - 1)) - 1;
    const U max_exp = (bias + reduced_bias) << kMantBits;
    const U min_exp = (bias - reduced_bias) << kMantBits;
    const U exponent = bits & exp_mask;
    if (exponent > max_exp)
      bits = (bits & sign_mask) | exp_mask;  // signed infinity
    else if (exponent <= min_exp)
      bits = bits & sign_mask;  // signed zero
  }
  return std::bit_cast<T>(bits);
}

void reduce_precision_kernel(const Params& params, std::span<const Buffer> in,
                             std::span<Buffer> out) {
  check_unary(in, out);
  const int64_t e = params.get_int("exponent_bits"), m = params.get_int("mantissa_bits");
  if (e < 1 || m < 0) kernel_type_error("invalid format: exponent_bits={} mantissa_bits={}", e, m);
  const int64_t n = in[0].aval().size();
  dispatch_op<kFloat>(in[0].aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, float>)
        y[i] = reduce_precision_one<float, uint32_t, 23, 8>(x[i], e, m);
      else
        y[i] = reduce_precision_one<double, uint64_t, 52, 11>(x[i], e, m);
    }
  });
}

// round[rounding_method]: 0 / AWAY_FROM_ZERO (the default) or 1 / TO_NEAREST_EVEN.
bool rounds_to_even(const Params& params) {
  const ParamValue* v = params.find("rounding_method");
  if (!v) return false;
  if (v->is<int64_t>()) return v->as<int64_t>() == 1;
  std::string_view text;
  if (v->is<std::string>()) text = v->as<std::string>();
  if (v->is<OpaqueParam>()) text = v->as<OpaqueParam>().text;
  return text.find("EVEN") != std::string_view::npos || text == "1";
}

void round_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_unary(in, out);
  const bool even = rounds_to_even(params);
  dispatch_op<kFloat>(in[0].aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    for (int64_t i = 0, n = in[0].aval().size(); i < n; ++i)
      y[i] = even ? std::nearbyint(x[i]) : std::round(x[i]);  // nearbyint: current mode, to even
  });
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  r.add("neg", unary_kernel<Neg>);
  r.add("sin", unary_kernel<Sin>);
  r.add("cos", unary_kernel<Cos>);
  r.add("tan", unary_kernel<Tan>);
  r.add("asin", unary_kernel<Asin>);
  r.add("acos", unary_kernel<Acos>);
  r.add("atan", unary_kernel<Atan>);
  r.add("sinh", unary_kernel<Sinh>);
  r.add("cosh", unary_kernel<Cosh>);
  r.add("tanh", unary_kernel<Tanh>);
  r.add("asinh", unary_kernel<Asinh>);
  r.add("acosh", unary_kernel<Acosh>);
  r.add("atanh", unary_kernel<Atanh>);
  r.add("exp", unary_kernel<Exp>);
  r.add("exp2", unary_kernel<Exp2>);
  r.add("log", unary_kernel<Log>);
  r.add("log1p", unary_kernel<Log1p>);
  r.add("expm1", unary_kernel<Expm1>);
  r.add("sqrt", unary_kernel<Sqrt>);
  r.add("rsqrt", unary_kernel<Rsqrt>);
  r.add("cbrt", unary_kernel<Cbrt>);
  r.add("logistic", unary_kernel<Logistic>);
  r.add("erf", unary_kernel<Erf>);
  r.add("erfc", unary_kernel<Erfc>);
  r.add("lgamma", unary_kernel<Lgamma>);
  r.add("erf_inv", unary_kernel<ErfInv>);
  r.add("floor", unary_kernel<Floor>);
  r.add("ceil", unary_kernel<Ceil>);
  r.add("abs", unary_kernel<Abs>);
  r.add("sign", unary_kernel<Sign>);
  r.add("square", unary_kernel<Square>);
  r.add("not", unary_kernel<Not>);
  r.add("population_count", unary_kernel<PopulationCount>);
  r.add("is_finite", is_finite_kernel);
  r.add("integer_pow", integer_pow_kernel);
  r.add("reduce_precision", reduce_precision_kernel);
  r.add("round", round_kernel);
}

}  // namespace cjax::runtime
