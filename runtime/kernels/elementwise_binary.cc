// Elementwise binary primitives, with the elementwise broadcasting rule (scalars, and size-1
// dimensions of equal-rank operands). Comparisons produce bool.
#include <cmath>

#include "runtime/kernels/int_math.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {

namespace {

// Runs out[i] = Op::f<T>(a[ia], b[ib]) over the output; Op::kTypes lists the accepted operand
// dtypes and Op::kCompare says the output is bool.
template <class Op>
void binary_loop(const Buffer& a, const Buffer& b, Buffer& out) {
  const Shape& shape = out.aval().shape;
  const std::vector<int64_t> sa = broadcast_strides(a.aval(), shape, 0);
  const std::vector<int64_t> sb = broadcast_strides(b.aval(), shape, 1);
  dispatch_op<Op::kTypes>(a.aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = std::conditional_t<Op::kCompare, bool, T>;
    const DType want = Op::kCompare ? DType::bool_ : a.aval().dtype;
    if (out.aval().dtype != want)
      kernel_type_error("output {} should have dtype {}", out.aval().str_short(), short_name(want));
    const T* x = a.as<T>();
    const T* y = b.as<T>();
    R* r = out.as<R>();
    int64_t i = 0;
    strided_loop<2>(shape, {sa.data(), sb.data()}, {0, 0}, [&](const std::array<int64_t, 2>& o) {
      r[i++] = Op::template f<T>(x[o[0]], y[o[1]]);
    });
  });
}

template <class Op>
void binary_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 2);
  check_outputs(out, 1);
  check_same_dtype(in[0], in[1]);
  binary_loop<Op>(in[0], in[1], out[0]);
}

template <class T>
constexpr T nan_of() {
  return std::numeric_limits<T>::quiet_NaN();
}

struct Add {
  static constexpr DTypeSet kTypes = kNumeric;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(a, b);
    else
      return a + b;
  }
};
struct Sub {
  static constexpr DTypeSet kTypes = kNumeric;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return wrap_sub(a, b);
    else
      return a - b;
  }
};
struct Mul {
  static constexpr DTypeSet kTypes = kNumeric;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return wrap_mul(a, b);
    else
      return a * b;
  }
};
struct Div {
  static constexpr DTypeSet kTypes = kNumeric;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return int_div(a, b);
    else
      return a / b;
  }
};
struct Rem {
  static constexpr DTypeSet kTypes = kNumeric;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return int_rem(a, b);
    else
      return std::fmod(a, b);
  }
};
struct Pow {
  static constexpr DTypeSet kTypes = kNumeric;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>)
        if (b < 0) return a == 1 ? T(1) : a == -1 ? (b % 2 ? T(-1) : T(1)) : T(0);
      return int_pow(a, static_cast<uint64_t>(b));
    } else {
      return std::pow(a, b);
    }
  }
};
// max and min propagate NaN, as XLA's do.
struct Max {
  static constexpr DTypeSet kTypes = kAll;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return nan_of<T>();
    return a > b ? a : b;
  }
};
struct Min {
  static constexpr DTypeSet kTypes = kAll;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return nan_of<T>();
    return a < b ? a : b;
  }
};
struct Atan2 {
  static constexpr DTypeSet kTypes = kFloat;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    return std::atan2(a, b);
  }
};
struct Nextafter {
  static constexpr DTypeSet kTypes = kFloat;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    return std::nextafter(a, b);
  }
};
struct And {
  static constexpr DTypeSet kTypes = kIntBool;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct Or {
  static constexpr DTypeSet kTypes = kIntBool;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct Xor {
  static constexpr DTypeSet kTypes = kIntBool;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};
// Shifts by a negative amount or by the bit width or more give 0 (or the sign, for arithmetic
// right shifts), as in XLA.
struct ShiftLeft {
  static constexpr DTypeSet kTypes = kInt;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return T(0);
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(b)));
  }
};
struct ShiftRightLogical {
  static constexpr DTypeSet kTypes = kInt;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return T(0);
    return static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
  }
};
struct ShiftRightArithmetic {
  static constexpr DTypeSet kTypes = kInt;
  static constexpr bool kCompare = false;
  template <class T>
  static T f(T a, T b) {
    using S = std::make_signed_t<T>;
    using U = std::make_unsigned_t<T>;
    const S sa = static_cast<S>(a);
    if (static_cast<U>(b) >= sizeof(T) * 8) return static_cast<T>(sa < 0 ? S(-1) : S(0));
    return static_cast<T>(sa >> static_cast<U>(b));  // arithmetic on signed values (C++20)
  }
};

#define CJAX_COMPARISON(NAME, OP)            \
  struct NAME {                              \
    static constexpr DTypeSet kTypes = kAll; \
    static constexpr bool kCompare = true;   \
    template <class T>                       \
    static bool f(T a, T b) {                \
      return a OP b;                         \
    }                                        \
  };
CJAX_COMPARISON(Eq, ==)
CJAX_COMPARISON(Ne, !=)
CJAX_COMPARISON(Lt, <)
CJAX_COMPARISON(Le, <=)
CJAX_COMPARISON(Gt, >)
CJAX_COMPARISON(Ge, >=)
#undef CJAX_COMPARISON

// pow also takes a float base with an integer exponent (lax.pow's mixed form).
void pow_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 2);
  check_outputs(out, 1);
  if (in[0].aval().dtype != in[1].aval().dtype && is_floating(in[0].aval().dtype) &&
      is_integer(in[1].aval().dtype)) {
    Buffer exponent = convert_buffer(in[1], in[0].aval().dtype);
    binary_loop<Pow>(in[0], exponent, out[0]);
    return;
  }
  check_same_dtype(in[0], in[1]);
  binary_loop<Pow>(in[0], in[1], out[0]);
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  r.add("add", binary_kernel<Add>);
  r.add("add_any", binary_kernel<Add>);
  r.add("sub", binary_kernel<Sub>);
  r.add("mul", binary_kernel<Mul>);
  r.add("div", binary_kernel<Div>);
  r.add("rem", binary_kernel<Rem>);
  r.add("pow", pow_kernel);
  r.add("max", binary_kernel<Max>);
  r.add("min", binary_kernel<Min>);
  r.add("atan2", binary_kernel<Atan2>);
  r.add("nextafter", binary_kernel<Nextafter>);
  r.add("and", binary_kernel<And>);
  r.add("or", binary_kernel<Or>);
  r.add("xor", binary_kernel<Xor>);
  r.add("shift_left", binary_kernel<ShiftLeft>);
  r.add("shift_right_logical", binary_kernel<ShiftRightLogical>);
  r.add("shift_right_arithmetic", binary_kernel<ShiftRightArithmetic>);
  r.add("eq", binary_kernel<Eq>);
  r.add("ne", binary_kernel<Ne>);
  r.add("lt", binary_kernel<Lt>);
  r.add("le", binary_kernel<Le>);
  r.add("gt", binary_kernel<Gt>);
  r.add("ge", binary_kernel<Ge>);
}

}  // namespace cjax::runtime
