#include "cjax/autodiff_jacobian.h"

#include <fmt/format.h>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/promotion.h"
#include "cjax/vmap.h"
#include "ir/errors.h"

namespace cjax::detail {
namespace {

Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

void check_floating(const char* api, const char* what, std::span<const Array> xs) {
  for (size_t i = 0; i < xs.size(); ++i)
    if (!is_floating(xs[i].dtype()))
      throw TypeError(
          fmt::format("{} requires real-valued {}s (a floating point dtype), but {} {} "
                      "is {}",
                      api, what, what, i, xs[i].aval().str_short()));
}

// The dtype every leaf promotes to (jax.dtypes.result_type of the leaves).
DType common_dtype(std::span<const Array> xs) {
  std::vector<DTypeAndWeak> types;
  for (const Array& x : xs) types.push_back({x.dtype(), x.weak_type()});
  return result_type(types).dtype;
}

// lax._eye: ones on the diagonal of an n x n matrix, as jnp.eye traces it.
Array eye(int64_t n, DType dtype) {
  const Shape shape{n, n};
  const Array rows = lax::broadcasted_iota(DType::i32, shape, 0);  // in the order JAX traces them
  const Array cols = lax::broadcasted_iota(DType::i32, shape, 1);
  const Array diagonal = lax::eq(lax::add(rows, Array::scalar(0.0, DType::i32)), cols);
  return lax::convert_element_type(diagonal, dtype);
}

// JAX's _unravel_array_into_pytree: `arr` cut along `axis` into one part per leaf (of the
// leaf's size; jnp.split, so the sizes are numpy ints), each reshaped so that the leaf's shape
// replaces that axis.
std::vector<Array> unravel(const Array& arr, int64_t axis, std::span<const Array> leaves) {
  if (axis < 0) axis += arr.ndim();
  std::vector<int64_t> sizes;
  for (const Array& l : leaves) sizes.push_back(l.size());
  const SourceInfo src = std::source_location::current();
  Params p{{"sizes", ParamValue::np_ints(sizes)}, {"axis", axis}};
  std::vector<Array> parts =
      cjax::bind("split", std::span<const Array>(&arr, 1), std::move(p), src);
  for (size_t i = 0; i < parts.size(); ++i) {
    Shape shape(arr.shape().begin(), arr.shape().begin() + axis);
    shape = concat(shape, leaves[i].shape());
    shape.insert(shape.end(), arr.shape().begin() + axis + 1, arr.shape().end());
    parts[i] = lax::reshape(parts[i], shape);
  }
  return parts;
}

// JAX's _std_basis: the rows of an identity over all of the leaves' elements, one part per leaf
// of shape (n,) + the leaf's shape.
std::vector<Array> std_basis(std::span<const Array> leaves) {
  int64_t n = 0;
  for (const Array& l : leaves) n += l.size();
  return unravel(eye(n, common_dtype(leaves)), 1, leaves);
}

}  // namespace

// jax.jacfwd: vmap of jvp over the standard basis of the inputs, the Jacobian's input axes last.
JacobianBlocks jacfwd_flat(const ClosedTrace& f, std::span<const Array> primals) {
  check_floating("jacfwd", "input", primals);
  const size_t m = f.jaxpr.outvars.size();
  std::vector<Array> basis = std_basis(primals);
  auto push_forward = [&](const std::vector<Array>& tangents) {
    JvpValues v = jvp_flat(f, primals, tangents);
    return std::pair{v.outs, v.tangent_outs};
  };
  std::vector<std::optional<int>> axes(m, std::nullopt);
  axes.insert(axes.end(), m, -1);
  auto [outs, jac] = vmap(push_forward, 0, VmapAxes(axes))(basis);
  JacobianBlocks blocks;
  for (size_t i = 0; i < m; ++i) blocks.push_back(unravel(jac[i], -1, primals));
  return blocks;
}

// jax.jacrev: vjp once, then vmap of the pullback over the standard basis of the outputs, the
// Jacobian's output axes first.
JacobianBlocks jacrev_flat(const ClosedTrace& f, std::span<const Array> primals) {
  check_floating("jacrev", "input", primals);
  VjpFlat vjp(f, primals);
  const std::vector<Array>& outs = vjp.outs();
  check_floating("jacrev", "output", outs);
  std::vector<Array> basis = std_basis(outs);
  auto pull_back = [&](const std::vector<Array>& cts) { return vjp.apply(cts); };
  std::vector<Array> jac = vmap(pull_back)(basis);
  JacobianBlocks blocks(outs.size(), std::vector<Array>(primals.size()));
  for (size_t j = 0; j < primals.size(); ++j) {
    std::vector<Array> rows = unravel(jac[j], 0, outs);
    for (size_t i = 0; i < outs.size(); ++i) blocks[i][j] = rows[i];
  }
  return blocks;
}

}  // namespace cjax::detail
