// select_n (pick one of n cases per element) and clamp.
#include <algorithm>

#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// select_n(pred, *cases): out[i] = cases[pred[i]][i]. pred is bool (False picks case 0) or an
// integer, and is a scalar or has the output's shape; an index out of range is clamped.
void select_n_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_min_arity(in, 2);
  check_outputs(out, 1);
  const Buffer& pred = in[0];
  const ShapedArray& oa = out[0].aval();
  const size_t ncases = in.size() - 1;
  for (size_t c = 1; c < in.size(); ++c)
    if (!in[c].aval().same_type(oa))
      kernel_type_error("case {} ({}) does not match the output {}", c - 1,
                        in[c].aval().str_short(), oa.str_short());
  if (pred.aval().rank() != 0 && pred.aval().shape != oa.shape)
    kernel_type_error("predicate {} must be a scalar or of shape {}", pred.aval().str_short(),
                      shape_str(oa.shape));
  if (pred.aval().dtype == DType::bool_ && ncases > 2)
    kernel_type_error("a bool predicate selects between at most 2 cases, got {}", ncases);
  const int64_t n = oa.size();
  const bool scalar_pred = pred.aval().rank() == 0;
  std::vector<int64_t> which(static_cast<size_t>(scalar_pred ? 1 : n));
  dispatch_op<kIntBool>(pred.aval().dtype, [&](auto tag) {
    using P = typename decltype(tag)::type;
    const P* p = pred.as<P>();
    const int64_t hi = static_cast<int64_t>(ncases) - 1;
    for (size_t i = 0; i < which.size(); ++i) {
      int64_t k;
      if constexpr (std::is_same_v<P, uint64_t>)
        k = p[i] > static_cast<uint64_t>(hi) ? hi : static_cast<int64_t>(p[i]);
      else
        k = static_cast<int64_t>(p[i]);
      which[i] = std::clamp<int64_t>(k, 0, hi);
    }
  });
  const size_t item = itemsize(oa.dtype);
  auto* dst = static_cast<unsigned char*>(out[0].data());
  for (int64_t i = 0; i < n; ++i) {
    const Buffer& src =
        in[1 + static_cast<size_t>(which[scalar_pred ? 0 : static_cast<size_t>(i)])];
    std::memcpy(dst + i * item, static_cast<const unsigned char*>(src.data()) + i * item, item);
  }
}

// clamp(lo, x, hi) = min(max(x, lo), hi); lo and hi are scalars or of x's shape. A NaN x stays NaN.
void clamp_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 3);
  check_outputs(out, 1);
  const Buffer &lo = in[0], &x = in[1], &hi = in[2];
  check_same_dtype(lo, x);
  check_same_dtype(hi, x);
  if (!out[0].aval().same_type(x.aval()))
    kernel_type_error("operand {} does not match the output {}", x.aval().str_short(),
                      out[0].aval().str_short());
  for (const Buffer* b : {&lo, &hi})
    if (b->aval().rank() != 0 && b->aval().shape != x.aval().shape)
      kernel_type_error("bound {} must be a scalar or of shape {}", b->aval().str_short(),
                        shape_str(x.aval().shape));
  const bool lo_scalar = lo.aval().rank() == 0, hi_scalar = hi.aval().rank() == 0;
  dispatch_op<kNumeric>(x.aval().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pl = lo.as<T>(), *px = x.as<T>(), *ph = hi.as<T>();
    T* py = out[0].as<T>();
    for (int64_t i = 0, n = x.aval().size(); i < n; ++i) {
      const T l = pl[lo_scalar ? 0 : i], h = ph[hi_scalar ? 0 : i];
      T v = px[i];
      if (v < l) v = l;
      if (v > h) v = h;
      py[i] = v;
    }
  });
}

}  // namespace

void register_select_kernels(KernelRegistry& r) {
  r.add("select_n", select_n_kernel);
  r.add("clamp", clamp_kernel);
}

}  // namespace cjax::runtime
