// Reductions over a set of axes (reduce_sum / prod / max / min / and / or / xor) and the index
// reductions argmax / argmin over one axis; psum / pmax / pmin over positional axes.
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/distributed.h"
#include "runtime/kernels/int_math.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// For every operand element, the offset of the output element it reduces into: the operand's
// index with the reduced axes dropped. Checks that the output has that shape.
std::vector<int64_t> reduced_strides(const ShapedArray& ia, const ShapedArray& oa,
                                     const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(ia.shape.size(), false);
  for (int64_t a : axes) {
    const size_t n = static_cast<size_t>(normalize_axis(a, ia.rank()));
    if (reduced[n]) kernel_type_error("axis {} listed twice", a);
    reduced[n] = true;
  }
  Shape kept;
  for (size_t d = 0; d < ia.shape.size(); ++d)
    if (!reduced[d]) kept.push_back(ia.shape[d]);
  if (kept != oa.shape)
    kernel_type_error("reducing {} over axes {} gives shape {}, not {}", ia.str_short(),
                      shape_str(axes), shape_str(kept), oa.str_short());
  std::vector<int64_t> out_strides = row_major_strides(oa.shape), strides(ia.shape.size(), 0);
  for (size_t d = 0, k = 0; d < ia.shape.size(); ++d)
    if (!reduced[d]) strides[d] = out_strides[k++];
  return strides;
}

template <class Op>
void reduce_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& oa = out[0].aval();
  if (ia.dtype != oa.dtype)
    kernel_type_error("operand {} and output {} differ in dtype", ia.str_short(), oa.str_short());
  const std::vector<int64_t> to_out = reduced_strides(ia, oa, params.get_ints("axes"));
  const std::vector<int64_t> own = row_major_strides(ia.shape);
  dispatch_op<Op::kTypes>(ia.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename Op::template Accumulator<T>;
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    const auto n = static_cast<size_t>(oa.size());
    if constexpr (std::is_same_v<Acc, T>) {
      for (size_t i = 0; i < n; ++i) y[i] = Op::template init<T>();
      strided_loop<2>(
          ia.shape, {own.data(), to_out.data()}, {0, 0},
          [&](const std::array<int64_t, 2>& o) { y[o[1]] = Op::template f<T>(y[o[1]], x[o[0]]); });
    } else {
      std::vector<Acc> acc(n, Op::template init<Acc>());
      strided_loop<2>(
          ia.shape, {own.data(), to_out.data()}, {0, 0}, [&](const std::array<int64_t, 2>& o) {
            acc[static_cast<size_t>(o[1])] =
                Op::template f<Acc>(acc[static_cast<size_t>(o[1])], static_cast<Acc>(x[o[0]]));
          });
      for (size_t i = 0; i < n; ++i) y[i] = static_cast<T>(acc[i]);
    }
  });
}

struct Sum : WideSum {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T init() {
    return T(0);
  }
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(acc, x);
    else
      return acc + x;
  }
};
struct Prod : SameAccumulator {
  static constexpr DTypeSet kTypes = kNumeric;
  template <class T>
  static T init() {
    return T(1);
  }
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_integral_v<T>)
      return wrap_mul(acc, x);
    else
      return acc * x;
  }
};
// max and min of an empty set are the identities -inf / +inf (lowest / highest integer); NaN
// propagates.
struct MaxOp : SameAccumulator {
  static constexpr DTypeSet kTypes = kAll;
  template <class T>
  static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return -std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  }
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return x > acc ? x : acc;
  }
};
struct MinOp : SameAccumulator {
  static constexpr DTypeSet kTypes = kAll;
  template <class T>
  static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::max();
  }
  template <class T>
  static T f(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return x < acc ? x : acc;
  }
};
struct AndOp : SameAccumulator {
  static constexpr DTypeSet kTypes = kIntBool;
  template <class T>
  static T init() {
    if constexpr (std::is_same_v<T, bool>)
      return true;
    else
      return static_cast<T>(~T(0));
  }
  template <class T>
  static T f(T acc, T x) {
    return static_cast<T>(acc & x);
  }
};
struct OrOp : SameAccumulator {
  static constexpr DTypeSet kTypes = kIntBool;
  template <class T>
  static T init() {
    return T(0);
  }
  template <class T>
  static T f(T acc, T x) {
    return static_cast<T>(acc | x);
  }
};
struct XorOp : SameAccumulator {
  static constexpr DTypeSet kTypes = kIntBool;
  template <class T>
  static T init() {
    return T(0);
  }
  template <class T>
  static T f(T acc, T x) {
    return static_cast<T>(acc ^ x);
  }
};

// argmax / argmin[axes index_dtype]: the first index of the extreme along the one axis; a NaN
// counts as more extreme than any number (the first NaN wins), as in NumPy.
template <bool kMax>
void arg_extreme_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& oa = out[0].aval();
  const std::vector<int64_t> axes = params.get_ints("axes");
  if (axes.size() != 1) kernel_type_error("expected one axis, got {}", shape_str(axes));
  const size_t axis = static_cast<size_t>(normalize_axis(axes[0], ia.rank()));
  reduced_strides(ia, oa, axes);  // checks the output shape
  if (ia.shape[axis] == 0) kernel_type_error("reduction over the empty axis of {}", ia.str_short());
  const auto [outer, len, inner] = split_at(ia.shape, axis);
  dispatch_op<kAll>(ia.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    dispatch_op<kInt>(oa.dtype, [&](auto itag) {
      using I = typename decltype(itag)::type;
      I* y = out[0].as<I>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          const T* p = x + o * len * inner + j;
          int64_t best = 0;
          T bv = p[0];
          for (int64_t k = 1; k < len; ++k) {
            if constexpr (std::is_floating_point_v<T>)
              if (std::isnan(bv)) break;
            const T v = p[k * inner];
            bool better = kMax ? v > bv : v < bv;
            if constexpr (std::is_floating_point_v<T>) better = better || std::isnan(v);
            if (better) {
              best = k;
              bv = v;
            }
          }
          y[o * inner + j] = static_cast<I>(best);
        }
    });
  });
}

template <class Op>
constexpr distributed::ReduceOp reduce_op() {
  if constexpr (std::is_same_v<Op, Sum>) return distributed::ReduceOp::sum;
  if constexpr (std::is_same_v<Op, MaxOp>) return distributed::ReduceOp::max;
  return distributed::ReduceOp::min;
}

// psum/pmax/pmin: each operand reduced over its positional axes (what vmap turned a named axis
// into), then over the processes of its named axes (inside shard_map, runtime/distributed.h).
template <class Op>
void all_reduce_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_outputs(out, in.size());
  std::vector<int64_t> axes;
  std::vector<std::string> names;
  for (const ParamValue& a : params.at("axes").as<ParamTuple>().items) {
    if (a.is<int64_t>())
      axes.push_back(a.as<int64_t>());
    else
      names.push_back(a.as<std::string>());
  }
  const Params reduce{{"axes", ParamValue::ints(axes)}};
  for (size_t i = 0; i < in.size(); ++i) {
    if (axes.empty())
      std::memcpy(out[i].data(), in[i].data(), in[i].nbytes());
    else
      reduce_kernel<Op>(reduce, in.subspan(i, 1), out.subspan(i, 1));
    if (!names.empty())
      distributed::all_reduce(names, reduce_op<Op>(), out[i].aval().dtype, out[i].data(),
                              out[i].data(), out[i].aval().size());
  }
}

}  // namespace

void register_reduction_kernels(KernelRegistry& r) {
  r.add("psum", all_reduce_kernel<Sum>);
  r.add("pmax", all_reduce_kernel<MaxOp>);
  r.add("pmin", all_reduce_kernel<MinOp>);
  r.add("reduce_sum", reduce_kernel<Sum>);
  r.add("reduce_prod", reduce_kernel<Prod>);
  r.add("reduce_max", reduce_kernel<MaxOp>);
  r.add("reduce_min", reduce_kernel<MinOp>);
  r.add("reduce_and", reduce_kernel<AndOp>);
  r.add("reduce_or", reduce_kernel<OrOp>);
  r.add("reduce_xor", reduce_kernel<XorOp>);
  r.add("argmax", arg_extreme_kernel<true>);
  r.add("argmin", arg_extreme_kernel<false>);
}

}  // namespace cjax::runtime
