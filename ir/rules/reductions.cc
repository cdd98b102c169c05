// Reductions over axes (reduce_*), argmax/argmin, cumulative reductions (cum*) and sort
// (jax/_src/lax/lax.py, jax/_src/lax/control_flow/loops.py).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

ShapeRule reduce_rule(std::string name, unsigned accepted) {
  return [name = std::move(name), accepted](Avals in, const Params& params) -> AvalList {
    expect_arity(name, in, 1);
    expect_dtype(name, in, 0, accepted);
    std::vector<int64_t> axes = ints_param(name, params, "axes");
    if (std::set<int64_t>(axes.begin(), axes.end()).size() != axes.size())
      fail_got(name, fmt::format("axes {} has duplicates", ints_str(axes)), in);
    for (int64_t a : axes) check_axis(name, "axis", a, in[0].rank(), in);
    Shape shape;
    for (int64_t d = 0; d < in[0].rank(); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(in[0].shape[d]);
    return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
  };
}

// argmax/argmin[axes index_dtype]: exactly one axis, of non-zero size; never weakly typed.
ShapeRule argminmax_rule(std::string name) {
  return [name = std::move(name)](Avals in, const Params& params) -> AvalList {
    expect_arity(name, in, 1);
    expect_dtype(name, in, 0, kAny);
    std::vector<int64_t> axes = ints_param(name, params, "axes");
    DType index_dtype = dtype_param(name, params, "index_dtype");
    if (axes.size() != 1)
      fail_got(name, fmt::format("expects one axis, got {}", ints_str(axes)), in);
    check_axis(name, "axis", axes[0], in[0].rank(), in);
    if (in[0].shape[axes[0]] < 1) fail_got(name, "the reduced dimension must not be empty", in);
    if (!is_integer(index_dtype))
      fail(name,
           fmt::format("index_dtype must be an integer type, got {}", long_name(index_dtype)));
    Shape shape = in[0].shape;
    shape.erase(shape.begin() + axes[0]);
    return {ShapedArray(index_dtype, std::move(shape))};
  };
}

// cumsum/cumprod/cummax/cummin/cumlogsumexp[axis reverse]: same shape as the operand.
ShapeRule cumulative_rule(std::string name, unsigned accepted) {
  return [name = std::move(name), accepted](Avals in, const Params& params) -> AvalList {
    expect_arity(name, in, 1);
    expect_dtype(name, in, 0, accepted);
    check_axis(name, "axis", int_param(name, params, "axis"), in[0].rank(), in);
    bool_param(name, params, "reverse");
    return {ShapedArray(in[0].dtype, in[0].shape, in[0].weak_type)};
  };
}

// sort[dimension is_stable num_keys]: operands of one shape sorted together along `dimension`,
// lexicographically by the first num_keys of them; each output has its operand's type.
AvalList sort_rule(Avals in, const Params& params) {
  expect_min_arity("sort", in, 1);
  for (size_t i = 0; i < in.size(); ++i) {
    expect_dtype("sort", in, i, kAny);
    if (in[i].shape != in[0].shape) fail_got("sort", "operands must have one shape", in);
  }
  check_axis("sort", "dimension", int_param("sort", params, "dimension"), in[0].rank(), in);
  bool_param("sort", params, "is_stable");
  const int64_t num_keys = int_param("sort", params, "num_keys");
  if (num_keys < 1 || num_keys > static_cast<int64_t>(in.size()))
    fail_got("sort",
             fmt::format("num_keys={} must be between 1 and the {} operands", num_keys, in.size()),
             in);
  return AvalList(in.begin(), in.end());
}

// top_k[axis is_stable k]: the k largest elements along `axis` in descending order, and their
// indices (i32).
AvalList top_k_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "top_k";
  expect_arity(kPrim, in, 1);
  expect_dtype(kPrim, in, 0, kNum);
  if (in[0].rank() < 1) fail_got(kPrim, "the operand must have at least one dimension", in);
  const int64_t axis = int_param(kPrim, params, "axis");
  check_axis(kPrim, "axis", axis, in[0].rank(), in);
  const int64_t k = int_param(kPrim, params, "k");
  if (k < 0 || k > in[0].shape[axis])
    fail_got(kPrim,
             fmt::format("k={} must be between 0 and the axis' size {}", k, in[0].shape[axis]), in);
  Shape shape = in[0].shape;
  shape[axis] = k;
  return {ShapedArray(in[0].dtype, shape, in[0].weak_type), ShapedArray(DType::i32, shape)};
}

}  // namespace

void register_reductions(PrimitiveTable& table) {
  table.add(make_primitive("top_k", top_k_rule));
  // reduce_sum (jax >= 0.8) and reduce_max/reduce_min (jax main after 0.11.0) carry
  // `out_sharding`, printed as `out_sharding=None`; older text lacks it.
  for (auto [name, accepted] : {std::pair{"reduce_sum", kNum}, std::pair{"reduce_max", kAny},
                                std::pair{"reduce_min", kAny}}) {
    Primitive p = make_primitive(name, reduce_rule(name, accepted));
    p.canonicalize_params = add_missing({{"out_sharding", NoneParam{}}});
    table.add(reads_each_input_once(std::move(p)));
  }
  // These bind only `axes`.
  table.add(reads_each_input_once(make_primitive("reduce_prod", reduce_rule("reduce_prod", kNum))));
  table.add(
      reads_each_input_once(make_primitive("reduce_and", reduce_rule("reduce_and", kBoolOrInt))));
  table.add(
      reads_each_input_once(make_primitive("reduce_or", reduce_rule("reduce_or", kBoolOrInt))));
  table.add(
      reads_each_input_once(make_primitive("reduce_xor", reduce_rule("reduce_xor", kBoolOrInt))));

  table.add(reads_each_input_once(make_primitive("argmax", argminmax_rule("argmax"))));
  table.add(reads_each_input_once(make_primitive("argmin", argminmax_rule("argmin"))));

  for (auto [name, accepted] :
       {std::pair{"cumsum", kNum}, std::pair{"cumprod", kNum}, std::pair{"cummax", kNum},
        std::pair{"cummin", kNum}, std::pair{"cumlogsumexp", kFloat}})
    table.add(reads_each_input_once(make_primitive(name, cumulative_rule(name, accepted))));
  table.add(make_primitive("sort", sort_rule));
}

}  // namespace cjax
