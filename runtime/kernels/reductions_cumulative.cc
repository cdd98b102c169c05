// Running reductions along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp
// [axis reverse]. With reverse=True the scan runs from the end of the axis.
#include <cmath>

#include "runtime/kernels/int_math.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

template <class Op>
void cumulative_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  if (!ia.same_type(out[0].aval()))
    kernel_type_error("operand {} does not match the output {}", ia.str_short(),
                      out[0].aval().str_short());
  if (ia.rank() == 0) kernel_type_error("operand {} has no axis", ia.str_short());
  const size_t axis = static_cast<size_t>(normalize_axis(params.get_int("axis"), ia.rank()));
  const bool reverse = params.has("reverse") && params.get_bool("reverse");
  const auto [outer, len, inner] = split_at(ia.shape, axis);
  dispatch_op<Op::kTypes>(ia.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename Op::template Accumulator<T>;
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t base = o * len * inner + j;
        Acc acc{};
        for (int64_t s = 0; s < len; ++s) {
          const int64_t k = reverse ? len - 1 - s : s;
          const int64_t at = base + k * inner;
          acc =
              s == 0 ? static_cast<Acc>(x[at]) : Op::template f<Acc>(acc, static_cast<Acc>(x[at]));
          y[at] = static_cast<T>(acc);
        }
      }
  });
}

struct CumSum : WideSum {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(acc, x);
    else
      return acc + x;
  }
};
struct CumProd : SameAccumulator {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_integral_v<T>)
      return wrap_mul(acc, x);
    else
      return acc * x;
  }
};
struct CumMax : SameAccumulator {
  static constexpr DTypeSet kTypes = kAll;
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
    return x > acc ? x : acc;
  }
};
struct CumMin : SameAccumulator {
  static constexpr DTypeSet kTypes = kAll;
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
    return x < acc ? x : acc;
  }
};
// log(e^acc + e^x), computed around the larger of the two.
struct CumLogSumExp : SameAccumulator {
  static constexpr DTypeSet kTypes = kFloat;
  template <class T>
  static T f(T acc, T x) {
    const T m = acc > x ? acc : x;
    if (std::isinf(m)) return m;  // +inf absorbs; -inf means both are -inf
    return m + std::log(std::exp(acc - m) + std::exp(x - m));
  }
};

}  // namespace

void register_cumulative_kernels(KernelRegistry& r) {
  r.add("cumsum", cumulative_kernel<CumSum>);
  r.add("cumprod", cumulative_kernel<CumProd>);
  r.add("cummax", cumulative_kernel<CumMax>);
  r.add("cummin", cumulative_kernel<CumMin>);
  r.add("cumlogsumexp", cumulative_kernel<CumLogSumExp>);
}

}  // namespace cjax::runtime
