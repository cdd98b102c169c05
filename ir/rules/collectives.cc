// Collectives over named axes (jax/_src/lax/parallel.py): psum, pmax, pmin (all-reduce over named
// axes and, once vmap has turned a named axis into an array axis, positional ones), axis_index,
// all_gather and reduce_scatter (psum_scatter), ppermute, all_to_all, and shard_map, which binds
// its mesh's axes for the collectives of its body. A named axis is bound by an enclosing vmap's
// axis_name or by a shard_map's mesh; all_gather and reduce_scatter carry the axis size in their
// params, all_to_all reads it from the axis environment (ir/axis_env.h), as JAX's rule does.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/axis_env.h"
#include "ir/jaxpr.h"
#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"
#include "ir/sharding.h"

namespace cjax {
namespace {

using namespace rules;

void expect_no_groups(std::string_view prim, const Params& params) {
  if (!none_or_missing(params, "axis_index_groups"))
    fail(prim, "axis_index_groups is not supported (only None)");
}

// The items of a tuple or list param; throws naming the key otherwise.
const std::vector<ParamValue>& tuple_param(std::string_view prim, const Params& params,
                                           std::string_view key) {
  const ParamValue& v = param(prim, params, key);
  if (v.is<ParamTuple>()) return v.as<ParamTuple>().items;
  if (v.is<ParamList>()) return v.as<ParamList>().items;
  fail(prim, fmt::format("param '{}' must be a tuple of axis names", key));
}

// psum/pmax/pmin[axes axis_index_groups]: `axes` names axes ('i') and positional axes (0); each
// operand is reduced over its positional axes (the named ones do not change shapes). The outputs
// are never weakly typed (JAX's ShapedArray(shape, dtype)).
ShapeRule all_reduce_rule(std::string name, unsigned accepted) {
  return [name = std::move(name), accepted](Avals in, const Params& params) -> AvalList {
    expect_min_arity(name, in, 1);
    expect_no_groups(name, params);
    std::vector<int64_t> positional;
    std::set<std::string> named;
    for (const ParamValue& a : tuple_param(name, params, "axes")) {
      if (a.is<int64_t>()) {
        positional.push_back(a.as<int64_t>());
      } else if (a.is<std::string>()) {
        if (!named.insert(a.as<std::string>()).second)
          fail(name, fmt::format("axis name '{}' appears twice", a.as<std::string>()));
      } else {
        fail(name, "each of `axes` must be an axis name or a positional axis");
      }
    }
    if (std::set<int64_t>(positional.begin(), positional.end()).size() != positional.size())
      fail_got(name, fmt::format("axes {} has duplicates", ints_str(positional)), in);
    AvalList out;
    for (size_t i = 0; i < in.size(); ++i) {
      expect_dtype(name, in, i, accepted);
      Shape shape;
      for (int64_t a : positional) check_axis(name, "axis", a, in[i].rank(), in);
      for (int64_t d = 0; d < in[i].rank(); ++d)
        if (std::find(positional.begin(), positional.end(), d) == positional.end())
          shape.push_back(in[i].shape[size_t(d)]);
      out.emplace_back(in[i].dtype, std::move(shape));
    }
    return out;
  };
}

// axis_index[axis_name]: this example's (this process's) index along the axis, an i32 scalar.
AvalList axis_index_rule(Avals in, const Params& params) {
  expect_arity("axis_index", in, 0);
  if (!param("axis_index", params, "axis_name").is<std::string>())
    fail("axis_index", "param 'axis_name' must be an axis name");
  return {ShapedArray(DType::i32, {})};
}

int64_t axis_size_param(std::string_view prim, const Params& params) {
  tuple_param(prim, params, "axis_name");
  const int64_t n = int_param(prim, params, "axis_size");
  if (n < 1) fail(prim, fmt::format("axis_size must be positive, got {}", n));
  return n;
}

// all_gather[all_gather_dimension axis_index_groups axis_name axis_size tiled]: every member's
// operand, stacked along a new axis at all_gather_dimension (tiled: concatenated along it).
AvalList all_gather_rule(Avals in, const Params& params) {
  expect_arity("all_gather", in, 1);
  expect_dtype("all_gather", in, 0, kAny);
  expect_no_groups("all_gather", params);
  const int64_t n = axis_size_param("all_gather", params);
  const int64_t d = int_param("all_gather", params, "all_gather_dimension");
  const bool tiled = bool_param("all_gather", params, "tiled");
  Shape shape = in[0].shape;
  check_axis("all_gather", "all_gather_dimension", d, in[0].rank() + (tiled ? 0 : 1), in);
  if (tiled)
    shape[size_t(d)] *= n;
  else
    shape.insert(shape.begin() + d, n);
  return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
}

// reduce_scatter[axis_index_groups axis_name axis_size scatter_dimension tiled] (psum_scatter):
// the sum over the axis, of which each member keeps its slice along scatter_dimension (tiled: a
// block of size/axis_size; otherwise the dimension, of size axis_size, is dropped).
AvalList reduce_scatter_rule(Avals in, const Params& params) {
  expect_arity("reduce_scatter", in, 1);
  expect_dtype("reduce_scatter", in, 0, kNum);
  expect_no_groups("reduce_scatter", params);
  const int64_t n = axis_size_param("reduce_scatter", params);
  const int64_t d = int_param("reduce_scatter", params, "scatter_dimension");
  check_axis("reduce_scatter", "scatter_dimension", d, in[0].rank(), in);
  Shape shape = in[0].shape;
  const int64_t size = shape[size_t(d)];
  if (bool_param("reduce_scatter", params, "tiled")) {
    if (size % n != 0)
      fail_got("reduce_scatter",
               fmt::format("tiled reduce_scatter operand scatter dimension size {} must be "
                           "divisible by shard_count {}",
                           size, n),
               in);
    shape[size_t(d)] = size / n;
  } else {
    if (size != n)
      fail_got("reduce_scatter",
               fmt::format("reduce_scatter operand scatter dimension size {} must match shard "
                           "count {}",
                           size, n),
               in);
    shape.erase(shape.begin() + d);
  }
  return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
}

// ppermute[axis_name perm]: member src's operand goes to member dst for each (src, dst) of perm
// (a member no pair sends to gets zeros). The sources are distinct, and so are the destinations.
AvalList ppermute_rule(Avals in, const Params& params) {
  expect_arity("ppermute", in, 1);
  expect_dtype("ppermute", in, 0, kAny);
  tuple_param("ppermute", params, "axis_name");
  std::set<int64_t> srcs, dsts;
  for (const ParamValue& pair : tuple_param("ppermute", params, "perm")) {
    std::optional<std::vector<int64_t>> sd = as_ints(pair);
    if (!sd || sd->size() != 2)
      fail("ppermute", "each entry of perm must be a pair (source, destination)");
    if ((*sd)[0] < 0 || (*sd)[1] < 0)
      fail("ppermute", fmt::format("perm has a negative index in {}", ints_str(*sd)));
    if (!srcs.insert((*sd)[0]).second || !dsts.insert((*sd)[1]).second)
      fail("ppermute", "ppermute sources and destinations must be unique");
  }
  return {in[0]};
}

// all_to_all[axis_index_groups axis_name concat_axis split_axis tiled]: each member cuts its
// operand into axis-size blocks along split_axis, sends block j to member j, and concatenates what
// it receives along concat_axis (lax.all_to_all adds and removes a unit axis around it when not
// tiled). The axis size comes from the axis environment, as in JAX's abstract eval.
AvalList all_to_all_rule(Avals in, const Params& params) {
  expect_arity("all_to_all", in, 1);
  expect_dtype("all_to_all", in, 0, kAny);
  expect_no_groups("all_to_all", params);
  bool_param("all_to_all", params, "tiled");
  const std::vector<std::string> axes = axis_names_of(param("all_to_all", params, "axis_name"));
  if (axes.empty()) fail("all_to_all", "param 'axis_name' must name an axis");
  int64_t n = 1;
  for (const std::string& a : axes) {
    std::optional<int64_t> size = bound_axis_size(a);
    if (!size) fail("all_to_all", fmt::format("unbound axis name: {}", a));
    if (*size < 1 || __builtin_mul_overflow(n, *size, &n))
      fail("all_to_all", fmt::format("the axis {} has size {}", a, *size));
  }
  const int64_t split = int_param("all_to_all", params, "split_axis");
  const int64_t concat = int_param("all_to_all", params, "concat_axis");
  check_axis("all_to_all", "split_axis", split, in[0].rank(), in);
  check_axis("all_to_all", "concat_axis", concat, in[0].rank(), in);
  Shape shape = in[0].shape;
  if (shape[size_t(split)] % n != 0)
    fail_got("all_to_all",
             fmt::format("the split axis {} has size {}, which the axis size {} does not divide",
                         split, shape[size_t(split)], n),
             in);
  shape[size_t(split)] /= n;
  shape[size_t(concat)] *= n;
  return {ShapedArray(in[0].dtype, std::move(shape), in[0].weak_type)};
}

// shard_map[check_vma in_specs jaxpr mesh newly_manual_axes out_specs]: the body runs on every
// device's block of the operands (the mesh's axes bound for its collectives); its results, blocks
// under out_specs, make the outputs.
AvalList shard_map_rule(Avals in, const Params& params) {
  const Jaxpr& body = jaxpr_param("shard_map", params, "jaxpr");
  const MeshAxes mesh = mesh_from_param(param("shard_map", params, "mesh"));
  const std::vector<PartitionSpec> in_specs =
      specs_from_param(param("shard_map", params, "in_specs"), "in_specs");
  const std::vector<PartitionSpec> out_specs =
      specs_from_param(param("shard_map", params, "out_specs"), "out_specs");
  bool_param("shard_map", params, "check_vma");  // the types are the same either way
  if (in_specs.size() != in.size() || body.invars.size() != in.size())
    fail_got("shard_map",
             fmt::format("{} in_specs and a body of {} inputs for {} operands", in_specs.size(),
                         body.invars.size(), in.size()),
             in);
  if (out_specs.size() != body.outvars.size())
    fail("shard_map", fmt::format("{} out_specs for a body of {} outputs", out_specs.size(),
                                  body.outvars.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape local = local_shape(in[i].shape, in_specs[i], mesh, "shard_map");
    const ShapedArray& inner = body.invars[i].aval();
    if (inner.dtype != in[i].dtype || inner.shape != local)
      fail_got("shard_map",
               fmt::format("operand {} is split by {} into blocks of shape {}, but the body "
                           "takes {}",
                           i, in_specs[i].repr(), shape_str(local), inner.str_short()),
               in);
  }
  AvalList out;
  for (size_t i = 0; i < body.outvars.size(); ++i) {
    const ShapedArray& inner = body.outvars[i].aval();
    out.emplace_back(inner.dtype, global_shape(inner.shape, out_specs[i], mesh, "shard_map"));
  }
  return out;
}

}  // namespace

void register_collectives(PrimitiveTable& table) {
  table.add(reads_each_input_once(make_primitive("psum", all_reduce_rule("psum", kNum))));
  table.add(reads_each_input_once(make_primitive("pmax", all_reduce_rule("pmax", kNum))));
  table.add(reads_each_input_once(make_primitive("pmin", all_reduce_rule("pmin", kNum))));
  table.add(moves_data(make_primitive("axis_index", axis_index_rule)));
  table.add(moves_data(make_primitive("all_gather", all_gather_rule)));
  table.add(reads_each_input_once(make_primitive("reduce_scatter", reduce_scatter_rule)));
  table.add(moves_data(make_primitive("ppermute", ppermute_rule)));
  table.add(moves_data(make_primitive("all_to_all", all_to_all_rule)));
  table.add(make_primitive("shard_map", shard_map_rule));
}

}  // namespace cjax
