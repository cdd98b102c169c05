// gather and the scatters: scatter, scatter-add, scatter-mul, scatter-min, scatter-max
// (jax/_src/lax/slicing.py's shape rules; the semantics are XLA's Gather and Scatter, with the
// index vector in the last dimension of the indices).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "ir/errors.h"
#include "ir/gather_params.h"
#include "ir/rules/gather_scatter.h"
#include "ir/rules/registry.h"
#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

// `dims` sorted, each once, each in [0, bound).
void check_dims(std::string_view prim, std::string_view what, const std::vector<int64_t>& dims,
                int64_t bound, bool sorted, Avals in) {
  std::set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= bound)
      fail_got(prim,
               fmt::format("{} {} holds {}, out of range for {} dimensions", what, ints_str(dims),
                           dims[i], bound),
               in);
    if (!seen.insert(dims[i]).second)
      fail_got(prim, fmt::format("{} {} repeats {}", what, ints_str(dims), dims[i]), in);
    if (sorted && i > 0 && dims[i] < dims[i - 1])
      fail_got(prim, fmt::format("{} {} must be sorted", what, ints_str(dims)), in);
  }
}

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The indices: integers whose last dimension is the index vector, of `vector_size` entries.
void check_indices(std::string_view prim, const ShapedArray& indices, size_t vector_size,
                   std::string_view map_name, Avals in) {
  if (!in_class(indices.dtype, kInt)) fail_got(prim, "indices must have an integer dtype", in);
  if (indices.rank() < 1)
    fail_got(prim, "indices must have at least one dimension (the index vector, last)", in);
  if (indices.shape.back() != static_cast<int64_t>(vector_size))
    fail_got(prim,
             fmt::format("the indices' last dimension (the index vector, {}) must have one entry "
                         "per {} entry ({})",
                         indices.shape.back(), map_name, vector_size),
             in);
}

// operand_batching_dims of the operand against the indices' batching dims: one to one, of equal
// sizes, never the index vector.
void check_batching(std::string_view prim, const ShapedArray& operand, const ShapedArray& indices,
                    const std::vector<int64_t>& operand_dims,
                    const std::vector<int64_t>& indices_dims, Avals in) {
  check_dims(prim, "operand_batching_dims", operand_dims, operand.rank(), true, in);
  check_dims(prim, "the indices' batching dims", indices_dims, indices.rank() - 1, false, in);
  if (operand_dims.size() != indices_dims.size())
    fail_got(prim, "operand_batching_dims and the indices' batching dims differ in number", in);
  for (size_t i = 0; i < operand_dims.size(); ++i)
    if (operand.shape[operand_dims[i]] != indices.shape[indices_dims[i]])
      fail_got(prim,
               fmt::format("operand batching dim {} has size {}, the indices' batching dim {} has "
                           "size {}",
                           operand_dims[i], operand.shape[operand_dims[i]], indices_dims[i],
                           indices.shape[indices_dims[i]]),
               in);
}

// The dimension numbers (and a check of the mode); a malformed text is a TypeError naming `prim`.
template <class Numbers>
Numbers read_dimension_numbers(std::string_view prim, const Params& params) {
  const ParamValue& dims = param(prim, params, "dimension_numbers");
  const ParamValue& mode = param(prim, params, "mode");
  try {
    gather_scatter_mode(mode);
    return Numbers::from_param(dims);
  } catch (const Error& e) {
    fail(prim, e.what());
  }
}

// gather[dimension_numbers fill_value indices_are_sorted mode slice_sizes unique_indices].
AvalList gather_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "gather";
  expect_arity(kPrim, in, 2);
  const ShapedArray& operand = in[0];
  const ShapedArray& indices = in[1];
  const auto dn = read_dimension_numbers<GatherDimensionNumbers>(kPrim, params);
  const std::vector<int64_t> sizes = ints_param(kPrim, params, "slice_sizes");
  check_indices(kPrim, indices, dn.start_index_map.size(), "start_index_map", in);
  const int64_t batch_rank = indices.rank() - 1;
  const int64_t out_rank = static_cast<int64_t>(dn.offset_dims.size()) + batch_rank;
  check_dims(kPrim, "offset_dims", dn.offset_dims, out_rank, true, in);
  check_dims(kPrim, "collapsed_slice_dims", dn.collapsed_slice_dims, operand.rank(), true, in);
  check_dims(kPrim, "start_index_map", dn.start_index_map, operand.rank(), false, in);
  check_batching(kPrim, operand, indices, dn.operand_batching_dims, dn.start_indices_batching_dims,
                 in);
  if (static_cast<int64_t>(sizes.size()) != operand.rank())
    fail_got(
        kPrim,
        fmt::format("slice_sizes {} must have one entry per operand dimension", ints_str(sizes)),
        in);
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > operand.shape[d])
      fail_got(kPrim, fmt::format("slice_sizes {} out of bounds", ints_str(sizes)), in);
    const bool dropped =
        contains(dn.collapsed_slice_dims, d) || contains(dn.operand_batching_dims, d);
    if (dropped && sizes[d] > 1)
      fail_got(kPrim,
               fmt::format("slice_sizes {} must be 0 or 1 at collapsed and batching dim {}",
                           ints_str(sizes), d),
               in);
    if (contains(dn.collapsed_slice_dims, d) && contains(dn.operand_batching_dims, d))
      fail_got(kPrim, fmt::format("dim {} is both collapsed and a batching dim", d), in);
  }
  Shape offsets;
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!contains(dn.collapsed_slice_dims, d) && !contains(dn.operand_batching_dims, d))
      offsets.push_back(sizes[d]);
  if (offsets.size() != dn.offset_dims.size())
    fail_got(kPrim,
             fmt::format("offset_dims {} must have one entry per operand dimension that is neither "
                         "collapsed nor a batching dim ({})",
                         ints_str(dn.offset_dims), offsets.size()),
             in);
  Shape shape;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    shape.push_back(contains(dn.offset_dims, d) ? offsets[next_offset++]
                                                : indices.shape[next_batch++]);
  return {ShapedArray(operand.dtype, std::move(shape), operand.weak_type)};
}

// scatter*[dimension_numbers indices_are_sorted mode unique_indices update_consts update_jaxpr]:
// the operand with the updates combined in; the same type as the operand.
AvalList scatter_rule(std::string_view prim, Avals in, const Params& params) {
  expect_arity(prim, in, 3);
  const ShapedArray& operand = in[0];
  const ShapedArray& indices = in[1];
  const ShapedArray& updates = in[2];
  const auto dn = read_dimension_numbers<ScatterDimensionNumbers>(prim, params);
  if (updates.dtype != operand.dtype)
    fail_got(prim, "the updates must have the operand's dtype", in);
  check_indices(prim, indices, dn.scatter_dims_to_operand_dims.size(),
                "scatter_dims_to_operand_dims", in);
  const int64_t batch_rank = indices.rank() - 1;
  if (updates.rank() != static_cast<int64_t>(dn.update_window_dims.size()) + batch_rank)
    fail_got(prim,
             fmt::format("the updates must have one dimension per update_window_dims entry {} "
                         "and per batch dimension of the indices ({})",
                         ints_str(dn.update_window_dims), batch_rank),
             in);
  check_dims(prim, "update_window_dims", dn.update_window_dims, updates.rank(), true, in);
  check_dims(prim, "inserted_window_dims", dn.inserted_window_dims, operand.rank(), true, in);
  check_dims(prim, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, operand.rank(),
             false, in);
  check_batching(prim, operand, indices, dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                 in);
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!contains(dn.inserted_window_dims, d) && !contains(dn.operand_batching_dims, d))
      window_operand_dims.push_back(d);
  if (window_operand_dims.size() != dn.update_window_dims.size())
    fail_got(prim,
             fmt::format("update_window_dims {} must have one entry per operand dimension that "
                         "is neither inserted nor a batching dim ({})",
                         ints_str(dn.update_window_dims), window_operand_dims.size()),
             in);
  for (size_t i = 0; i < window_operand_dims.size(); ++i)
    if (updates.shape[dn.update_window_dims[i]] > operand.shape[window_operand_dims[i]])
      fail_got(prim,
               fmt::format("update window dim {} (size {}) is larger than operand dim {} ({})",
                           dn.update_window_dims[i], updates.shape[dn.update_window_dims[i]],
                           window_operand_dims[i], operand.shape[window_operand_dims[i]]),
               in);
  size_t next_batch = 0;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (contains(dn.update_window_dims, d)) continue;
    if (updates.shape[d] != indices.shape[next_batch])
      fail_got(prim,
               fmt::format("update scatter dim {} (size {}) must match the indices' batch dim {} "
                           "({})",
                           d, updates.shape[d], next_batch, indices.shape[next_batch]),
               in);
    ++next_batch;
  }
  return {ShapedArray(operand.dtype, operand.shape, operand.weak_type && updates.weak_type)};
}

}  // namespace

JaxprRef scatter_update_jaxpr(std::string_view scatter_prim, DType dtype) {
  static const std::map<std::string_view, std::string_view> kCombine = {{"scatter-add", "add"},
                                                                        {"scatter-mul", "mul"},
                                                                        {"scatter-min", "min"},
                                                                        {"scatter-max", "max"}};
  const auto combine = kCombine.find(scatter_prim);
  if (combine == kCombine.end()) throw Error(fmt::format("{} has no update jaxpr", scatter_prim));
  static std::mutex mu;
  static std::map<std::pair<std::string_view, DType>, JaxprRef> cache;
  std::lock_guard lock(mu);
  JaxprRef& j = cache[{combine->first, dtype}];
  if (!j) {
    const ShapedArray scalar(dtype, {});
    Jaxpr body;
    body.invars = {Var(scalar), Var(scalar)};
    Eqn e{&get_primitive(combine->second), {body.invars[0], body.invars[1]}, {Var(scalar)}, {}, {}};
    body.outvars = {e.outputs[0]};
    body.eqns.push_back(std::move(e));
    j = std::make_shared<const Jaxpr>(std::move(body));
  }
  return j;
}

void register_gather_scatter(PrimitiveTable& table) {
  table.add(moves_data(make_primitive("gather", gather_rule)));
  for (const char* name : {"scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"})
    table.add(moves_data(make_primitive(
        name, [name](Avals in, const Params& p) { return scatter_rule(name, in, p); })));
}

}  // namespace cjax
