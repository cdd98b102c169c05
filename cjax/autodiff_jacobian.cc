#include "cjax/autodiff_jacobian.h"

#include <fmt/format.h>

#include "cjax/lax.h"
#include "ir/errors.h"

namespace cjax::detail {
namespace {

Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

// The e-th standard basis vector of `aval` (a concrete Array).
Array basis(const ShapedArray& aval, int64_t e) {
  std::vector<double> data(static_cast<size_t>(aval.size()), 0.0);
  data[static_cast<size_t>(e)] = 1.0;
  return array(data, aval.shape, aval.dtype);
}

Array concrete_zeros(const ShapedArray& aval) {
  return Array::from_buffer(runtime::Buffer::full(ShapedArray(aval.dtype, aval.shape), 0.0));
}

void check_floating(const char* api, const char* what, std::span<const ShapedArray> avals) {
  for (size_t i = 0; i < avals.size(); ++i)
    if (!is_floating(avals[i].dtype))
      throw TypeError(
          fmt::format("{} requires real-valued {}s (a floating point dtype), but {} {} "
                      "is {}",
                      api, what, what, i, avals[i].str_short()));
}

// Stacks `parts` (each of shape `part`) along a new axis placed first (`leading`) or last, then
// reshapes the stack to `shape`.
Array stack_to(const std::vector<Array>& parts, const Shape& part, bool leading, const Shape& shape,
               DType dtype) {
  if (parts.empty()) return concrete_zeros(ShapedArray(dtype, shape));
  if (parts.size() == 1)  // one column: no stacking
    return parts[0].shape() == shape ? parts[0] : lax::reshape(parts[0], shape);
  Shape one = leading ? concat({1}, part) : concat(part, {1});
  std::vector<Array> expanded;
  for (const Array& p : parts) expanded.push_back(lax::reshape(p, one));
  Array stacked = lax::concatenate(expanded, leading ? 0 : static_cast<int64_t>(part.size()));
  return lax::reshape(stacked, shape);
}

std::vector<ShapedArray> avals_of(std::span<const Array> xs) {
  std::vector<ShapedArray> out;
  for (const Array& x : xs) out.emplace_back(x.dtype(), x.shape());
  return out;
}

}  // namespace

JacobianBlocks jacfwd_flat(const ClosedTrace& f, std::span<const Array> primals) {
  std::vector<ShapedArray> in = avals_of(primals);
  check_floating("jacfwd", "input", in);
  LinearizedFlat lin(f, primals);
  std::vector<ShapedArray> out = avals_of(lin.outs());
  JacobianBlocks blocks(out.size(), std::vector<Array>(in.size()));
  std::vector<Array> tangents;
  for (const ShapedArray& a : in) tangents.push_back(concrete_zeros(a));
  for (size_t j = 0; j < in.size(); ++j) {
    std::vector<std::vector<Array>> columns(out.size());
    for (int64_t e = 0; e < in[j].size(); ++e) {
      tangents[j] = basis(in[j], e);
      std::vector<Array> t = lin.apply(tangents);
      for (size_t i = 0; i < out.size(); ++i) columns[i].push_back(t[i]);
    }
    tangents[j] = concrete_zeros(in[j]);
    for (size_t i = 0; i < out.size(); ++i)
      blocks[i][j] = stack_to(columns[i], out[i].shape, /*leading=*/false,
                              concat(out[i].shape, in[j].shape), out[i].dtype);
  }
  return blocks;
}

JacobianBlocks jacrev_flat(const ClosedTrace& f, std::span<const Array> primals) {
  std::vector<ShapedArray> in = avals_of(primals);
  check_floating("jacrev", "input", in);
  VjpFlat vjp(f, primals);
  std::vector<ShapedArray> out = avals_of(vjp.outs());
  check_floating("jacrev", "output", out);
  JacobianBlocks blocks(out.size(), std::vector<Array>(in.size()));
  std::vector<Array> cts;
  for (const ShapedArray& a : out) cts.push_back(concrete_zeros(a));
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<std::vector<Array>> rows(in.size());
    for (int64_t e = 0; e < out[i].size(); ++e) {
      cts[i] = basis(out[i], e);
      std::vector<Array> c = vjp.apply(cts);
      for (size_t j = 0; j < in.size(); ++j) rows[j].push_back(c[j]);
    }
    cts[i] = concrete_zeros(out[i]);
    for (size_t j = 0; j < in.size(); ++j)
      blocks[i][j] = stack_to(rows[j], in[j].shape, /*leading=*/true,
                              concat(out[i].shape, in[j].shape), in[j].dtype);
  }
  return blocks;
}

}  // namespace cjax::detail
