// dot_general[dimension_numbers preferred_element_type]: a contraction with batch dimensions.
// The output's dimensions are the batch dimensions, then the lhs free ones, then the rhs free
// ones; operands of another dtype than the output are converted to it first.
#include <algorithm>

#include "runtime/blas_dot.h"
#include "runtime/kernels/int_math.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// The offsets (in elements) of every index over `dims` of an array with `strides`, in
// row-major order of those dims.
std::vector<int64_t> offsets_over(const Shape& shape, const std::vector<int64_t>& strides,
                                  const std::vector<int64_t>& dims) {
  Shape sub;
  std::vector<int64_t> sub_strides;
  for (int64_t d : dims) {
    sub.push_back(shape[static_cast<size_t>(d)]);
    sub_strides.push_back(strides[static_cast<size_t>(d)]);
  }
  std::vector<int64_t> out;
  strided_loop<1>(sub, {sub_strides.data()}, {0},
                  [&](const std::array<int64_t, 1>& o) { out.push_back(o[0]); });
  return out;
}

void check_dims(const std::vector<int64_t>& dims, int64_t rank, const char* what) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)])
      kernel_type_error("invalid {} dimensions {} for rank {}", what, shape_str(dims), rank);
    seen[static_cast<size_t>(d)] = true;
  }
}

void dot_general_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 2);
  check_outputs(out, 1);
  const DotDimensionNumbers dn = DotDimensionNumbers::from_param(params.at("dimension_numbers"));
  const ShapedArray& oa = out[0].aval();
  // Compute in the output's dtype (preferred_element_type, or the operands' own).
  const Buffer lhs = in[0].aval().dtype == oa.dtype ? in[0] : convert_buffer(in[0], oa.dtype);
  const Buffer rhs = in[1].aval().dtype == oa.dtype ? in[1] : convert_buffer(in[1], oa.dtype);
  const ShapedArray& la = lhs.aval();
  const ShapedArray& ra = rhs.aval();
  if (dn.lhs_contract.size() != dn.rhs_contract.size() ||
      dn.lhs_batch.size() != dn.rhs_batch.size())
    kernel_type_error("lhs and rhs list different numbers of contracting or batch dimensions");
  check_dims(dn.lhs_contract, la.rank(), "lhs contracting");
  check_dims(dn.rhs_contract, ra.rank(), "rhs contracting");
  check_dims(dn.lhs_batch, la.rank(), "lhs batch");
  check_dims(dn.rhs_batch, ra.rank(), "rhs batch");
  const std::vector<int64_t> lfree = dot_free_dims(la.rank(), dn.lhs_contract, dn.lhs_batch);
  const std::vector<int64_t> rfree = dot_free_dims(ra.rank(), dn.rhs_contract, dn.rhs_batch);
  if (lfree.size() + dn.lhs_contract.size() + dn.lhs_batch.size() != la.shape.size() ||
      rfree.size() + dn.rhs_contract.size() + dn.rhs_batch.size() != ra.shape.size())
    kernel_type_error("a dimension is both contracting and batch");
  Shape want;
  auto size_of = [](const ShapedArray& a, int64_t d) { return a.shape[static_cast<size_t>(d)]; };
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    if (size_of(la, dn.lhs_batch[i]) != size_of(ra, dn.rhs_batch[i]))
      kernel_type_error("batch dimensions differ in size ({}, {})", la.str_short(), ra.str_short());
    want.push_back(size_of(la, dn.lhs_batch[i]));
  }
  for (size_t i = 0; i < dn.lhs_contract.size(); ++i)
    if (size_of(la, dn.lhs_contract[i]) != size_of(ra, dn.rhs_contract[i]))
      kernel_type_error("contracting dimensions differ in size ({}, {})", la.str_short(),
                        ra.str_short());
  for (int64_t d : lfree) want.push_back(size_of(la, d));
  for (int64_t d : rfree) want.push_back(size_of(ra, d));
  if (want != oa.shape)
    kernel_type_error("the result of {} x {} has shape {}, not {}", la.str_short(), ra.str_short(),
                      shape_str(want), oa.str_short());

  // f32 and f64 go through BLAS, as compiled code does; other dtypes take the loops below.
  if (blas_dot_supported(la, ra, oa)) {
    run_dot(plan_dot(la, ra, dn, oa), lhs.data(), rhs.data(), out[0].data());
    return;
  }
  const std::vector<int64_t> ls = row_major_strides(la.shape), rs = row_major_strides(ra.shape);
  const std::vector<int64_t> lb = offsets_over(la.shape, ls, dn.lhs_batch);
  const std::vector<int64_t> rb = offsets_over(ra.shape, rs, dn.rhs_batch);
  const std::vector<int64_t> li = offsets_over(la.shape, ls, lfree);
  const std::vector<int64_t> rj = offsets_over(ra.shape, rs, rfree);
  const std::vector<int64_t> lk = offsets_over(la.shape, ls, dn.lhs_contract);
  const std::vector<int64_t> rk = offsets_over(ra.shape, rs, dn.rhs_contract);
  dispatch_op<kNumeric>(oa.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = lhs.as<T>();
    const T* b = rhs.as<T>();
    T* y = out[0].as<T>();
    const size_t nj = rj.size();
    for (size_t bi = 0; bi < lb.size(); ++bi)
      for (size_t i = 0; i < li.size(); ++i) {
        T* row = y + (bi * li.size() + i) * nj;
        std::fill(row, row + nj, T(0));
        for (size_t k = 0; k < lk.size(); ++k) {
          const T av = a[lb[bi] + li[i] + lk[k]];
          const T* bk = b + rb[bi] + rk[k];
          for (size_t j = 0; j < nj; ++j) {
            if constexpr (std::is_integral_v<T>)
              row[j] = wrap_add(row[j], wrap_mul(av, bk[rj[j]]));
            else
              row[j] += av * bk[rj[j]];
          }
        }
      }
  });
}

}  // namespace

void register_dot_kernels(KernelRegistry& r) {
  r.add("dot_general", dot_general_kernel);
}

}  // namespace cjax::runtime
