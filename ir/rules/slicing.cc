// slice, dynamic_slice, dynamic_update_slice (jax/_src/lax/slicing.py).
#include <fmt/format.h>

#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

// slice[start_indices limit_indices strides]: strides is None or one positive stride per
// dimension; a strided dimension keeps ceil((limit - start) / stride) elements.
AvalList slice_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "slice";
  expect_arity(kPrim, in, 1);
  const ShapedArray& x = in[0];
  std::vector<int64_t> start = ints_param(kPrim, params, "start_indices");
  std::vector<int64_t> limit = ints_param(kPrim, params, "limit_indices");
  auto strides = opt_ints_param(kPrim, params, "strides");
  if (static_cast<int64_t>(start.size()) != x.rank() || limit.size() != start.size())
    fail_got(kPrim,
             fmt::format("start_indices {} and limit_indices {} must have one entry per "
                         "operand dimension",
                         ints_str(start), ints_str(limit)),
             in);
  if (strides && strides->size() != start.size())
    fail_got(
        kPrim,
        fmt::format("strides {} must have one entry per operand dimension", ints_str(*strides)),
        in);
  Shape shape;
  for (size_t d = 0; d < start.size(); ++d) {
    if (start[d] < 0 || limit[d] < start[d] || limit[d] > x.shape[d])
      fail_got(kPrim,
               fmt::format("start_indices {} and limit_indices {} out of bounds", ints_str(start),
                           ints_str(limit)),
               in);
    int64_t n = limit[d] - start[d];
    int64_t s = strides ? (*strides)[d] : 1;
    if (s < 1) fail_got(kPrim, fmt::format("strides {} must be positive", ints_str(*strides)), in);
    shape.push_back(n == 0 ? 0 : (n - 1) / s + 1);
  }
  return {ShapedArray(x.dtype, std::move(shape), x.weak_type)};
}

// The scalar start indices of dynamic_(update_)slice: one per operand dimension, all of one
// integer dtype.
void check_indices(std::string_view prim, Avals in, Avals indices, int64_t rank) {
  if (static_cast<int64_t>(indices.size()) != rank)
    fail_got(prim,
             fmt::format("expects {} start indices, one per operand dimension, got {}", rank,
                         indices.size()),
             in);
  for (const ShapedArray& i : indices) {
    if (!i.shape.empty()) fail_got(prim, "start indices must be scalars", in);
    if (!is_integer(i.dtype) || i.dtype != indices[0].dtype)
      fail_got(prim, "start indices must be integers of one dtype", in);
  }
}

AvalList dynamic_slice_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "dynamic_slice";
  expect_min_arity(kPrim, in, 1);
  const ShapedArray& x = in[0];
  Shape sizes = ints_param(kPrim, params, "slice_sizes");
  check_indices(kPrim, in, in.subspan(1), x.rank());
  if (static_cast<int64_t>(sizes.size()) != x.rank())
    fail_got(
        kPrim,
        fmt::format("slice_sizes {} must have one entry per operand dimension", ints_str(sizes)),
        in);
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.shape[d])
      fail_got(kPrim, fmt::format("slice_sizes {} out of bounds", ints_str(sizes)), in);
  return {ShapedArray(x.dtype, std::move(sizes), all_weak(in))};
}

AvalList dynamic_update_slice_rule(Avals in, const Params&) {
  constexpr std::string_view kPrim = "dynamic_update_slice";
  expect_min_arity(kPrim, in, 2);
  const ShapedArray& x = in[0];
  const ShapedArray& update = in[1];
  if (update.rank() != x.rank()) fail_got(kPrim, "the update must have the operand's rank", in);
  check_indices(kPrim, in, in.subspan(2), x.rank());
  for (int64_t d = 0; d < x.rank(); ++d)
    if (update.shape[d] > x.shape[d])
      fail_got(kPrim, "the update must not be larger than the operand", in);
  if (update.dtype != x.dtype)
    fail_got(kPrim, "the operand and the update must have the same dtype", in);
  return {ShapedArray(x.dtype, x.shape, all_weak(in))};
}

}  // namespace

void register_slicing(PrimitiveTable& table) {
  table.add(moves_data(make_primitive("slice", slice_rule)));
  table.add(moves_data(make_primitive("dynamic_slice", dynamic_slice_rule)));
  table.add(moves_data(make_primitive("dynamic_update_slice", dynamic_update_slice_rule)));
}

}  // namespace cjax
