// Shape-changing primitives without arithmetic: broadcast_in_dim, reshape, transpose, squeeze,
// expand_dims, concatenate, pad, iota (jax/_src/lax/lax.py).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

bool distinct(const std::vector<int64_t>& xs) {
  return std::set<int64_t>(xs.begin(), xs.end()).size() == xs.size();
}

// Dimensions are non-negative and the element count fits in int64 (fuzzed text can ask for
// shapes whose size would overflow; every later size() would then be undefined behaviour).
void expect_nonnegative_shape(std::string_view prim, std::string_view key, const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(prim, fmt::format("{} {} has a negative dimension", key, ints_str(shape)));
    if (__builtin_mul_overflow(count, d, &count))
      fail(prim, fmt::format("{} {} has too many elements", key, ints_str(shape)));
  }
}

// broadcast_in_dim[shape broadcast_dimensions sharding]: operand dimension i becomes output
// dimension broadcast_dimensions[i]; its size is 1 or the output's size there.
AvalList broadcast_in_dim_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "broadcast_in_dim";
  expect_arity(kPrim, in, 1);
  Shape shape = ints_param(kPrim, params, "shape");
  std::vector<int64_t> dims = ints_param(kPrim, params, "broadcast_dimensions");
  expect_nonnegative_shape(kPrim, "shape", shape);
  const ShapedArray& x = in[0];
  if (static_cast<int64_t>(dims.size()) != x.rank())
    fail_got(kPrim,
             fmt::format("broadcast_dimensions {} must have one entry per operand dimension",
                         ints_str(dims)),
             in);
  if (shape.size() < dims.size())
    fail_got(kPrim, fmt::format("shape {} has a lower rank than the operand", ints_str(shape)), in);
  if (!distinct(dims))
    fail_got(kPrim, fmt::format("broadcast_dimensions {} has duplicates", ints_str(dims)), in);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(shape.size()))
      fail_got(kPrim,
               fmt::format("broadcast_dimensions {} out of range for shape {}", ints_str(dims),
                           ints_str(shape)),
               in);
    if (x.shape[i] != 1 && x.shape[i] != shape[dims[i]])
      fail_got(kPrim,
               fmt::format("operand dimension {} cannot broadcast to shape {} with "
                           "broadcast_dimensions {}",
                           i, ints_str(shape), ints_str(dims)),
               in);
  }
  return {ShapedArray(x.dtype, std::move(shape), x.weak_type)};
}

// reshape[new_sizes dimensions sharding]: `dimensions`, when not None, transposes the operand
// first.
AvalList reshape_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "reshape";
  expect_arity(kPrim, in, 1);
  Shape sizes = ints_param(kPrim, params, "new_sizes");
  expect_nonnegative_shape(kPrim, "new_sizes", sizes);
  if (auto dims = opt_ints_param(kPrim, params, "dimensions")) {
    std::vector<int64_t> sorted = *dims;
    std::sort(sorted.begin(), sorted.end());
    bool perm = static_cast<int64_t>(sorted.size()) == in[0].rank();
    for (size_t i = 0; perm && i < sorted.size(); ++i) perm = sorted[i] == static_cast<int64_t>(i);
    if (!perm)
      fail_got(kPrim,
               fmt::format("dimensions {} is not a permutation of the operand's dimensions",
                           ints_str(*dims)),
               in);
  }
  ShapedArray out(in[0].dtype, std::move(sizes), in[0].weak_type);
  if (out.size() != in[0].size())
    fail_got(kPrim,
             fmt::format("new_sizes {} has {} elements but the operand has {}", ints_str(out.shape),
                         out.size(), in[0].size()),
             in);
  return {out};
}

AvalList transpose_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "transpose";
  expect_arity(kPrim, in, 1);
  std::vector<int64_t> perm = ints_param(kPrim, params, "permutation");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int64_t>(perm.size()) == in[0].rank();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok)
    fail_got(kPrim,
             fmt::format("permutation {} is not a permutation of the operand's dimensions",
                         ints_str(perm)),
             in);
  Shape shape;
  for (int64_t p : perm) shape.push_back(in[0].shape[p]);
  return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
}

AvalList squeeze_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "squeeze";
  expect_arity(kPrim, in, 1);
  std::vector<int64_t> dims = ints_param(kPrim, params, "dimensions");
  if (!distinct(dims))
    fail_got(kPrim, fmt::format("dimensions {} has duplicates", ints_str(dims)), in);
  for (int64_t d : dims) {
    check_axis(kPrim, "dimension", d, in[0].rank(), in);
    if (in[0].shape[d] != 1)
      fail_got(kPrim, fmt::format("cannot squeeze dimension {} of size {}", d, in[0].shape[d]), in);
  }
  Shape shape;
  for (int64_t i = 0; i < in[0].rank(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) shape.push_back(in[0].shape[i]);
  return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
}

// expand_dims[dimensions]: inserts size-1 dimensions at the given output positions. Not a JAX
// primitive (JAX expresses it with broadcast_in_dim or reshape); kept for cjax's own passes.
AvalList expand_dims_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "expand_dims";
  expect_arity(kPrim, in, 1);
  std::vector<int64_t> dims = ints_param(kPrim, params, "dimensions");
  int64_t out_rank = in[0].rank() + static_cast<int64_t>(dims.size());
  if (!distinct(dims))
    fail_got(kPrim, fmt::format("dimensions {} has duplicates", ints_str(dims)), in);
  for (int64_t d : dims) check_axis(kPrim, "dimension", d, out_rank, in);
  Shape shape;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    shape.push_back(std::find(dims.begin(), dims.end(), i) != dims.end() ? 1 : in[0].shape[next++]);
  return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
}

AvalList concatenate_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "concatenate";
  expect_min_arity(kPrim, in, 1);
  int64_t dim = int_param(kPrim, params, "dimension");
  for (const ShapedArray& a : in)
    if (a.rank() != in[0].rank())
      fail_got(kPrim, "operands must have the same number of dimensions", in);
  check_axis(kPrim, "dimension", dim, in[0].rank(), in);
  Shape shape = in[0].shape;
  shape[dim] = 0;
  for (const ShapedArray& a : in) {
    for (int64_t d = 0; d < a.rank(); ++d)
      if (d != dim && a.shape[d] != in[0].shape[d])
        fail_got(kPrim, fmt::format("operand shapes differ outside dimension {}", dim), in);
    if (a.dtype != in[0].dtype) fail_got(kPrim, "operands must have the same dtype", in);
    if (__builtin_add_overflow(shape[dim], a.shape[dim], &shape[dim]))
      fail_got(kPrim, fmt::format("the size of dimension {} overflows int64", dim), in);
  }
  return {ShapedArray(in[0].dtype, std::move(shape), all_weak(in))};
}

// pad[padding_config]: (low, high, interior) per dimension; low and high may be negative.
AvalList pad_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "pad";
  expect_arity(kPrim, in, 2);
  if (!in[1].shape.empty()) fail_got(kPrim, "the padding value must be a scalar", in);
  if (in[0].dtype != in[1].dtype)
    fail_got(kPrim, "the operand and the padding value must have the same dtype", in);
  const ParamValue& config = param(kPrim, params, "padding_config");
  const std::vector<ParamValue>* rows = nullptr;
  if (config.is<ParamTuple>()) rows = &config.as<ParamTuple>().items;
  if (config.is<ParamList>()) rows = &config.as<ParamList>().items;
  if (!rows) fail(kPrim, "param 'padding_config' is not a tuple of (low, high, interior)");
  if (static_cast<int64_t>(rows->size()) != in[0].rank())
    fail_got(kPrim, "padding_config must have one entry per operand dimension", in);
  Shape shape;
  for (size_t d = 0; d < rows->size(); ++d) {
    auto row = as_ints((*rows)[d]);
    if (!row || row->size() != 3)
      fail(kPrim, "param 'padding_config' is not a tuple of (low, high, interior)");
    int64_t lo = (*row)[0], hi = (*row)[1], interior = (*row)[2];
    if (interior < 0) fail_got(kPrim, "interior padding must be non-negative", in);
    int64_t n = in[0].shape[d];
    // lo + hi + n + (n - 1) * interior, where params from text may overflow int64.
    int64_t size = 0;
    if ((n > 0 && (__builtin_mul_overflow(n - 1, interior, &size) ||
                   __builtin_add_overflow(size, n, &size))) ||
        __builtin_add_overflow(size, lo, &size) || __builtin_add_overflow(size, hi, &size))
      fail_got(kPrim, fmt::format("the padded size of dimension {} overflows int64", d), in);
    if (size < 0)
      fail_got(kPrim, fmt::format("dimension {} would have the negative size {}", d, size), in);
    shape.push_back(size);
  }
  return {ShapedArray(in[0].dtype, std::move(shape), all_weak(in))};
}

AvalList iota_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "iota";
  expect_arity(kPrim, in, 0);
  DType t = dtype_param(kPrim, params, "dtype");
  Shape shape = ints_param(kPrim, params, "shape");
  int64_t dim = int_param(kPrim, params, "dimension");
  expect_nonnegative_shape(kPrim, "shape", shape);
  if (!in_class(t, kNum)) fail(kPrim, fmt::format("does not accept dtype {}", long_name(t)));
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    fail(kPrim, fmt::format("dimension {} out of range for shape {}", dim, ints_str(shape)));
  return {ShapedArray(t, std::move(shape))};
}

// rev[dimensions]: the operand with the listed dimensions reversed (distinct, in range).
AvalList rev_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "rev";
  expect_arity(kPrim, in, 1);
  std::vector<int64_t> dims = ints_param(kPrim, params, "dimensions");
  std::vector<bool> seen(in[0].shape.size(), false);
  for (int64_t d : dims) {
    check_axis(kPrim, "dimensions", d, in[0].rank(), in);
    if (seen[static_cast<size_t>(d)])
      fail_got(kPrim, fmt::format("dimension {} is listed twice", d), in);
    seen[static_cast<size_t>(d)] = true;
  }
  return {in[0]};
}

// split[axis sizes]: the operand cut along `axis` into pieces of the given sizes, which add up to
// the dimension.
AvalList split_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "split";
  expect_arity(kPrim, in, 1);
  const int64_t axis = int_param(kPrim, params, "axis");
  check_axis(kPrim, "axis", axis, in[0].rank(), in);
  int64_t total = 0;
  AvalList out;
  for (int64_t size : ints_param(kPrim, params, "sizes")) {
    if (size < 0) fail_got(kPrim, fmt::format("negative size {}", size), in);
    total += size;
    Shape shape = in[0].shape;
    shape[static_cast<size_t>(axis)] = size;
    out.emplace_back(in[0].dtype, std::move(shape), in[0].weak_type);
  }
  if (total != in[0].shape[static_cast<size_t>(axis)])
    fail_got(kPrim,
             fmt::format("sizes add up to {}, not to dimension {} of size {}", total, axis,
                         in[0].shape[static_cast<size_t>(axis)]),
             in);
  return out;
}

// broadcast_in_dim's rule since jax 0.9.1: the shape and sharding are implied by the binder's
// type, and empty broadcast_dimensions are not shown (`broadcast_in_dim 1.0:f32[]`).
std::vector<ParamRef> broadcast_in_dim_print(const Params& params) {
  std::vector<ParamRef> out = sorted_params(params);
  std::erase_if(out, [](const ParamRef& r) {
    if (r.key == "shape" || r.key == "sharding") return true;
    if (r.key != "broadcast_dimensions") return false;
    auto dims = as_ints(*r.value);
    return dims && dims->empty();
  });
  return out;
}

}  // namespace

void register_structural(PrimitiveTable& table) {
  auto add_sharding = add_missing({{"sharding", NoneParam{}}});

  Primitive bcast = make_primitive("broadcast_in_dim", broadcast_in_dim_rule);
  bcast.print_params = broadcast_in_dim_print;
  bcast.canonicalize_params = add_sharding;
  table.add(moves_data(std::move(bcast)));

  Primitive reshape = make_primitive("reshape", reshape_rule);
  reshape.canonicalize_params = add_sharding;
  table.add(moves_data(std::move(reshape)));

  table.add(moves_data(make_primitive("transpose", transpose_rule)));
  table.add(moves_data(make_primitive("squeeze", squeeze_rule)));
  table.add(moves_data(make_primitive("expand_dims", expand_dims_rule)));
  table.add(moves_data(make_primitive("concatenate", concatenate_rule)));
  table.add(moves_data(make_primitive("pad", pad_rule)));
  table.add(moves_data(make_primitive("rev", rev_rule)));
  // Counted per output element, as before it was a table trait (the planner's costs stay put).
  table.add(make_primitive("split", split_rule));

  Primitive iota = make_primitive("iota", iota_rule);
  iota.canonicalize_params = add_sharding;
  table.add(moves_data(std::move(iota)));
}

}  // namespace cjax
