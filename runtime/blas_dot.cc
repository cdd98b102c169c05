#include "runtime/blas_dot.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "ir/errors.h"
#include "runtime/allocator.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/strided_copy.h"

namespace cjax::runtime {
namespace {

int64_t product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape[static_cast<size_t>(d)];
  return p;
}

// One matrix axis made of `dims` flattened in that order: its extent and the stride between its
// consecutive indices. Only a layout where each dim's stride is the next one's times that one's
// size flattens so (dims of size 1 do not count). Stride 0: the axis has at most one index.
struct Axis {
  int64_t extent = 1, stride = 0;
};

std::optional<Axis> flat_axis(const Shape& shape, const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& dims) {
  Axis a;
  int64_t expected = -1;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const auto d = static_cast<size_t>(*it);
    a.extent *= shape[d];
    if (shape[d] == 1) continue;
    if (expected < 0)
      a.stride = strides[d];
    else if (strides[d] != expected)
      return std::nullopt;
    expected = strides[d] * shape[d];
  }
  if (a.extent <= 1) a.stride = 0;
  return a;
}

// Reads a [rows, cols] matrix in place when one of its axes is contiguous and the other steps
// at least a whole row (BLAS's leading dimension): sets `transposed` and `ld`.
bool read_in_place(const Axis& rows, const Axis& cols, DotOperand& o) {
  const int64_t r = std::max<int64_t>(1, rows.extent), c = std::max<int64_t>(1, cols.extent);
  if (cols.stride <= 1) {
    o.transposed = false;
    o.ld = rows.stride == 0 ? c : rows.stride;
    if (o.ld >= c) return true;
  }
  if (rows.stride <= 1) {
    o.transposed = true;
    o.ld = cols.stride == 0 ? r : cols.stride;
    if (o.ld >= r) return true;
  }
  return false;
}

// Plans one operand whose gemm matrix is `rows` x `cols` (lists of its dims, flattened in that
// order) per index of its `batch` dims.
DotOperand plan_operand(const Shape& shape, const std::vector<int64_t>& batch,
                        const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  DotOperand o;
  o.shape = shape;
  const std::vector<int64_t> strides = row_major_strides(shape);
  const std::optional<Axis> r = flat_axis(shape, strides, rows),
                            c = flat_axis(shape, strides, cols);
  if (r && c && read_in_place(*r, *c, o)) {
    for (int64_t d : batch) o.batch_strides.push_back(strides[static_cast<size_t>(d)]);
    const int64_t natural_ld = std::max<int64_t>(1, o.transposed ? r->extent : c->extent);
    const std::optional<Axis> b = flat_axis(shape, strides, batch);
    o.dense = o.ld == natural_ld && b && (b->stride == 0 || b->stride == r->extent * c->extent);
    return o;
  }
  o.perm = batch;
  o.perm.insert(o.perm.end(), rows.begin(), rows.end());
  o.perm.insert(o.perm.end(), cols.begin(), cols.end());
  Shape packed;
  for (int64_t d : o.perm) packed.push_back(shape[static_cast<size_t>(d)]);
  const std::vector<int64_t> packed_strides = row_major_strides(packed);
  o.batch_strides.assign(packed_strides.begin(),
                         packed_strides.begin() + static_cast<std::ptrdiff_t>(batch.size()));
  o.transposed = false;
  o.ld = std::max<int64_t>(1, product(shape, cols));
  o.dense = false;
  return o;
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
void permute_copy(size_t elem_size, const void* src, const Shape& shape,
                  const std::vector<int64_t>& perm, void* dst) {
  const std::vector<int64_t> strides = row_major_strides(shape);
  Shape out_shape;
  std::vector<int64_t> src_strides;
  for (int64_t d : perm) {
    out_shape.push_back(shape[static_cast<size_t>(d)]);
    src_strides.push_back(strides[static_cast<size_t>(d)]);
  }
  strided_copy(elem_size, out_shape, src, src_strides, dst, row_major_strides(out_shape));
}

template <class T>
void gemm(const DotPlan& p, const T* a, const T* b, T* c) {
  const auto tra = p.lhs.transposed ? CblasTrans : CblasNoTrans;
  const auto trb = p.rhs.transposed ? CblasTrans : CblasNoTrans;
  const auto lda = static_cast<blasint>(p.lhs.ld), ldb = static_cast<blasint>(p.rhs.ld);
  const auto M = static_cast<blasint>(p.m), N = static_cast<blasint>(p.n);
  const auto K = static_cast<blasint>(p.k);
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
  const int64_t c_size = plan.m * plan.n;
  if (plan.k == 0) {
    std::memset(out, 0, sizeof(T) * static_cast<size_t>(plan.batch * c_size));
    return;
  }
  if (plan.batch * c_size == 0) return;
  std::unique_ptr<Scratch> packed_lhs, packed_rhs;
  if (!plan.lhs.perm.empty()) {
    packed_lhs =
        std::make_unique<Scratch>(sizeof(T) * static_cast<size_t>(plan.batch * plan.m * plan.k));
    permute_copy(sizeof(T), lhs, plan.lhs.shape, plan.lhs.perm, packed_lhs->p);
    lhs = static_cast<const T*>(packed_lhs->p);
  }
  if (!plan.rhs.perm.empty()) {
    packed_rhs =
        std::make_unique<Scratch>(sizeof(T) * static_cast<size_t>(plan.batch * plan.k * plan.n));
    permute_copy(sizeof(T), rhs, plan.rhs.shape, plan.rhs.perm, packed_rhs->p);
    rhs = static_cast<const T*>(packed_rhs->p);
  }
  // An odometer over the batch dims, moving both operands' offsets as it counts.
  const size_t nb = plan.batch_shape.size();
  std::vector<int64_t> idx(nb, 0);
  int64_t lo = 0, ro = 0;
  for (int64_t i = 0; i < plan.batch; ++i) {
    gemm(plan, lhs + lo, rhs + ro, out + i * c_size);
    for (size_t d = nb; d > 0; --d) {
      lo += plan.lhs.batch_strides[d - 1];
      ro += plan.rhs.batch_strides[d - 1];
      if (++idx[d - 1] < plan.batch_shape[d - 1]) break;
      lo -= plan.lhs.batch_strides[d - 1] * plan.batch_shape[d - 1];
      ro -= plan.rhs.batch_strides[d - 1] * plan.batch_shape[d - 1];
      idx[d - 1] = 0;
    }
  }
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
  // Contracting dims pair up in the order listed, so both operands flatten K alike; free dims
  // flatten in the output's order.
  const std::vector<int64_t>& lc = dn.lhs_contract;
  const std::vector<int64_t>& rc = dn.rhs_contract;
  const auto lf = dot_free_dims(static_cast<int64_t>(lhs.shape.size()), lc, dn.lhs_batch);
  const auto rf = dot_free_dims(static_cast<int64_t>(rhs.shape.size()), rc, dn.rhs_batch);
  for (size_t i = 0; i < lc.size(); ++i)
    if (lhs.shape[static_cast<size_t>(lc[i])] != rhs.shape[static_cast<size_t>(rc[i])])
      throw TypeError(fmt::format("dot_general: contracting dimensions differ in size: {} vs {}",
                                  lhs.str_short(), rhs.str_short()));
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    const int64_t size = lhs.shape[static_cast<size_t>(dn.lhs_batch[i])];
    if (size != rhs.shape[static_cast<size_t>(dn.rhs_batch[i])])
      throw TypeError(fmt::format("dot_general: batch dimensions differ in size: {} vs {}",
                                  lhs.str_short(), rhs.str_short()));
    p.batch_shape.push_back(size);
  }
  p.batch = product(lhs.shape, dn.lhs_batch);
  p.m = product(lhs.shape, lf);
  p.n = product(rhs.shape, rf);
  p.k = product(lhs.shape, lc);
  p.lhs = plan_operand(lhs.shape, dn.lhs_batch, lf, lc);
  p.rhs = plan_operand(rhs.shape, dn.rhs_batch, rc, rf);
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
