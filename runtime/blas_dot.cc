#include "runtime/blas_dot.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "ir/errors.h"
#include "runtime/allocator.h"

namespace cjax::runtime {
namespace {

int64_t product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape[static_cast<size_t>(d)];
  return p;
}

bool is_sorted_run(const std::vector<int64_t>& dims, int64_t first) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != first + static_cast<int64_t>(i)) return false;
  return true;
}

// How one operand becomes a gemm matrix per batch: its non-batch dims are `outer` then `inner`
// in memory (outer = rows). Returns the permutation to pack it, or empty when it is laid out so.
struct OperandLayout {
  std::vector<int64_t> perm;
  bool transposed = false;  // memory holds [contract, free] instead of the wanted order
};

// `first` and `second` are the dim lists the gemm wants in that order (free then contract for
// lhs, contract then free for rhs); a transposed read accepts them swapped.
OperandLayout layout_of(int64_t num_batch, const std::vector<int64_t>& first,
                        const std::vector<int64_t>& second) {
  OperandLayout l;
  if (is_sorted_run(first, num_batch) &&
      is_sorted_run(second, num_batch + static_cast<int64_t>(first.size())))
    return l;
  if (is_sorted_run(second, num_batch) &&
      is_sorted_run(first, num_batch + static_cast<int64_t>(second.size()))) {
    l.transposed = true;
    return l;
  }
  for (int64_t d = 0; d < num_batch; ++d) l.perm.push_back(d);
  l.perm.insert(l.perm.end(), first.begin(), first.end());
  l.perm.insert(l.perm.end(), second.begin(), second.end());
  return l;
}

void check_dims(const std::vector<int64_t>& dims, size_t rank, const char* what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[static_cast<size_t>(d)])
      throw TypeError(fmt::format("dot_general: invalid {} dimensions {} for rank {}", what,
                                  shape_str(dims), rank));
    seen[static_cast<size_t>(d)] = true;
  }
}

// Copies `src` (row-major `shape`) into row-major order of the permuted dims.
template <class T>
void permute_copy(const T* src, const Shape& shape, const std::vector<int64_t>& perm, T* dst) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1), out_shape(rank), src_strides(rank), idx(rank, 0);
  for (size_t i = 1; i < rank; ++i) strides[rank - 1 - i] = strides[rank - i] * shape[rank - i];
  int64_t total = 1;
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = shape[static_cast<size_t>(perm[i])];
    src_strides[i] = strides[static_cast<size_t>(perm[i])];
    total *= out_shape[i];
  }
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    dst[i] = src[off];
    for (size_t d = rank; d > 0; --d) {
      off += src_strides[d - 1];
      if (++idx[d - 1] < out_shape[d - 1]) break;
      off -= src_strides[d - 1] * out_shape[d - 1];
      idx[d - 1] = 0;
    }
  }
}

template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  const auto tra = ta ? CblasTrans : CblasNoTrans;
  const auto trb = tb ? CblasTrans : CblasNoTrans;
  const auto lda = static_cast<blasint>(ta ? m : k), ldb = static_cast<blasint>(tb ? k : n);
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, tra, trb, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, N);
  else
    cblas_dgemm(CblasRowMajor, tra, trb, M, N, K, 1.0, a, lda, b, ldb, 0.0, c, N);
}

// A scratch block from the tracking allocator, freed on scope exit.
struct Scratch {
  void* p;
  explicit Scratch(size_t n) : p(tracked_malloc(n)) {}
  ~Scratch() { tracked_free(p); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

template <class T>
void run_typed(const DotPlan& plan, const T* lhs, const T* rhs, T* out) {
  const int64_t a_size = plan.m * plan.k, b_size = plan.k * plan.n, c_size = plan.m * plan.n;
  if (plan.k == 0) {
    std::memset(out, 0, sizeof(T) * static_cast<size_t>(plan.batch * c_size));
    return;
  }
  if (plan.batch * c_size == 0) return;
  std::unique_ptr<Scratch> packed_lhs, packed_rhs;
  if (!plan.lhs_perm.empty()) {
    packed_lhs = std::make_unique<Scratch>(sizeof(T) * static_cast<size_t>(plan.batch * a_size));
    permute_copy(lhs, plan.lhs_shape, plan.lhs_perm, static_cast<T*>(packed_lhs->p));
    lhs = static_cast<const T*>(packed_lhs->p);
  }
  if (!plan.rhs_perm.empty()) {
    packed_rhs = std::make_unique<Scratch>(sizeof(T) * static_cast<size_t>(plan.batch * b_size));
    permute_copy(rhs, plan.rhs_shape, plan.rhs_perm, static_cast<T*>(packed_rhs->p));
    rhs = static_cast<const T*>(packed_rhs->p);
  }
  for (int64_t i = 0; i < plan.batch; ++i)
    gemm(plan.trans_lhs, plan.trans_rhs, plan.m, plan.n, plan.k, lhs + i * a_size, rhs + i * b_size,
         out + i * c_size);
}

}  // namespace

std::vector<int64_t> dot_free_dims(int64_t rank, const std::vector<int64_t>& contract,
                                   const std::vector<int64_t>& batch) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(contract.begin(), contract.end(), d) == contract.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end())
      out.push_back(d);
  return out;
}

bool blas_dot_supported(const ShapedArray& lhs, const ShapedArray& rhs, const ShapedArray& out) {
  const DType t = out.dtype;
  return (t == DType::f32 || t == DType::f64) && lhs.dtype == t && rhs.dtype == t;
}

DotPlan plan_dot(const ShapedArray& lhs, const ShapedArray& rhs, const DotDimensionNumbers& dn,
                 const ShapedArray& out) {
  if (!blas_dot_supported(lhs, rhs, out))
    throw UnsupportedError(
        fmt::format("dot_general: BLAS handles f32 and f64 operands of the "
                    "output's dtype, not {} x {} -> {}",
                    lhs.str_short(), rhs.str_short(), out.str_short()));
  check_dims(dn.lhs_contract, lhs.shape.size(), "lhs contracting");
  check_dims(dn.rhs_contract, rhs.shape.size(), "rhs contracting");
  check_dims(dn.lhs_batch, lhs.shape.size(), "lhs batch");
  check_dims(dn.rhs_batch, rhs.shape.size(), "rhs batch");
  if (dn.lhs_contract.size() != dn.rhs_contract.size() ||
      dn.lhs_batch.size() != dn.rhs_batch.size())
    throw TypeError("dot_general: lhs and rhs list different numbers of contracting or batch dims");
  DotPlan p;
  p.dtype = out.dtype;
  p.lhs_shape = lhs.shape;
  p.rhs_shape = rhs.shape;
  const auto nb = static_cast<int64_t>(dn.lhs_batch.size());
  // Batch dims that are not the leading dims (in order) are packed to the front.
  const bool lhs_batch_leading = is_sorted_run(dn.lhs_batch, 0);
  const bool rhs_batch_leading = is_sorted_run(dn.rhs_batch, 0);
  // Contracting dims pair up in the order listed. An operand is read in place only when its
  // contracting dims are an increasing run in that order, so both sides flatten K alike.
  const std::vector<int64_t>& lc = dn.lhs_contract;
  const std::vector<int64_t>& rc = dn.rhs_contract;
  const auto lf = dot_free_dims(static_cast<int64_t>(lhs.shape.size()), lc, dn.lhs_batch);
  const auto rf = dot_free_dims(static_cast<int64_t>(rhs.shape.size()), rc, dn.rhs_batch);
  for (size_t i = 0; i < lc.size(); ++i)
    if (lhs.shape[static_cast<size_t>(lc[i])] != rhs.shape[static_cast<size_t>(rc[i])])
      throw TypeError(fmt::format("dot_general: contracting dimensions differ in size: {} vs {}",
                                  lhs.str_short(), rhs.str_short()));
  p.batch = product(lhs.shape, dn.lhs_batch);
  p.m = product(lhs.shape, lf);
  p.n = product(rhs.shape, rf);
  p.k = product(lhs.shape, lc);
  auto plan_operand = [&](bool batch_leading, const std::vector<int64_t>& batch,
                          const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                          std::vector<int64_t>& perm, bool& transposed) {
    if (batch_leading) {
      OperandLayout l = layout_of(nb, first, second);
      perm = l.perm;
      transposed = l.transposed;
      return;
    }
    perm = batch;
    perm.insert(perm.end(), first.begin(), first.end());
    perm.insert(perm.end(), second.begin(), second.end());
    transposed = false;
  };
  plan_operand(lhs_batch_leading, dn.lhs_batch, lf, lc, p.lhs_perm, p.trans_lhs);
  plan_operand(rhs_batch_leading, dn.rhs_batch, rc, rf, p.rhs_perm, p.trans_rhs);
  return p;
}

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

void run_dot(const DotPlan& plan, const void* lhs, const void* rhs, void* out) {
  if (plan.dtype == DType::f32)
    run_typed(plan, static_cast<const float*>(lhs), static_cast<const float*>(rhs),
              static_cast<float*>(out));
  else
    run_typed(plan, static_cast<const double*>(lhs), static_cast<const double*>(rhs),
              static_cast<double*>(out));
}

}  // namespace cjax::runtime
