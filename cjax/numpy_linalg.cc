// jnp.dot and jnp.matmul (jax/_src/numpy/tensor_contractions.py).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/promotion.h"

namespace cjax::numpy {
namespace {

DTypeAndWeak preferred_type(const Array& a, const Array& b) {
  DTypeAndWeak args[] = {dtype_and_weak(a.aval()), dtype_and_weak(b.aval())};
  return result_type(args);
}

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

}  // namespace

Array dot(const Array& a, const Array& b, Loc src) {
  DTypeAndWeak pref = preferred_type(a, b);
  DotDimensionNumbers dn;
  if (a.ndim() != 0 && b.ndim() != 0) {
    dn.lhs_contract = {a.ndim() - 1};
    dn.rhs_contract = {b.ndim() == 1 ? 0 : b.ndim() - 2};
  }
  Array result = lax::dot_general(a, b, dn, pref.dtype, src);
  return lax::convert_element_type(result, pref.dtype, pref.weak, src);
}

Array matmul(const Array& a, const Array& b, Loc src) {
  const Array* ops[] = {&a, &b};
  for (int i = 0; i < 2; ++i)
    if (ops[i]->ndim() < 1)
      throw_type_error(src, fmt::format("matmul: input operand {} must have ndim at least 1, but "
                                        "it has ndim {}",
                                        i, ops[i]->ndim()));
  DTypeAndWeak pref = preferred_type(a, b);
  bool a_is_mat = a.ndim() > 1, b_is_mat = b.ndim() > 1;
  // Batch dims, right-aligned; -1 stands for a missing dim (None in JAX).
  Shape a_batch = a_is_mat ? Shape(a.shape().begin(), a.shape().end() - 2) : Shape{};
  Shape b_batch = b_is_mat ? Shape(b.shape().begin(), b.shape().end() - 2) : Shape{};
  size_t num_batch = std::max(a_batch.size(), b_batch.size());
  a_batch.insert(a_batch.begin(), num_batch - a_batch.size(), -1);
  b_batch.insert(b_batch.begin(), num_batch - b_batch.size(), -1);

  std::vector<int64_t> a_squeeze, b_squeeze, both_squeeze, a_bdims, b_bdims;
  std::vector<int64_t> idx_batch, idx_a_other, idx_b_other;
  auto sz = [](const std::vector<int64_t>& v) { return static_cast<int64_t>(v.size()); };
  for (size_t i = 0; i < num_batch; ++i) {
    int64_t ba = a_batch[i], bb = b_batch[i], ii = static_cast<int64_t>(i);
    if (ba < 0) {
      idx_b_other.push_back(ii);
    } else if (bb < 0) {
      idx_a_other.push_back(ii);
    } else if (ba == 1 && bb == 1) {
      a_squeeze.push_back(sz(idx_batch) + sz(idx_a_other) + sz(a_squeeze));
      b_squeeze.push_back(sz(idx_batch) + sz(idx_b_other) + sz(b_squeeze));
      both_squeeze.push_back(ii);
    } else if (ba == 1) {
      idx_b_other.push_back(ii);
      a_squeeze.push_back(sz(idx_batch) + sz(idx_a_other) + sz(a_squeeze));
    } else if (bb == 1) {
      idx_a_other.push_back(ii);
      b_squeeze.push_back(sz(idx_batch) + sz(idx_b_other) + sz(b_squeeze));
    } else if (ba == bb) {
      a_bdims.push_back(sz(idx_batch) + sz(idx_a_other));
      b_bdims.push_back(sz(idx_batch) + sz(idx_b_other));
      idx_batch.push_back(ii);
    } else {
      throw_type_error(src,
                       fmt::format("matmul: incompatible types for matmul arguments: {} and {}",
                                   a.aval().str_short(), b.aval().str_short()));
    }
  }
  int64_t nb = static_cast<int64_t>(num_batch);
  if (a_is_mat) idx_a_other.push_back(nb);
  if (b_is_mat) idx_b_other.push_back(nb + (a_is_mat ? 1 : 0));
  std::vector<int64_t> order = idx_batch;
  order.insert(order.end(), idx_a_other.begin(), idx_a_other.end());
  order.insert(order.end(), idx_b_other.begin(), idx_b_other.end());
  std::vector<int64_t> perm = range(sz(order));  // argsort(order)
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t x, int64_t y) { return order[x] < order[y]; });

  Array a2 = lax::squeeze(a, a_squeeze, src);
  Array b2 = lax::squeeze(b, b_squeeze, src);
  DotDimensionNumbers dn;
  dn.lhs_contract = {a2.ndim() - 1};
  dn.rhs_contract = {b2.ndim() - 1 - (b_is_mat ? 1 : 0)};
  dn.lhs_batch = a_bdims;
  dn.rhs_batch = b_bdims;
  Array out = lax::dot_general(a2, b2, dn, pref.dtype, src);
  Array result = lax::transpose(out, perm, src);
  if (!both_squeeze.empty()) result = lax::expand_dims(result, both_squeeze, src);
  return lax::convert_element_type(result, pref.dtype, pref.weak, src);
}

}  // namespace cjax::numpy
