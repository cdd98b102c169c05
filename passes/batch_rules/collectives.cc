// Batching rules of the collectives (jax/_src/lax/parallel.py's "fancy" batchers). Under
// vmap(axis_name='i') a collective over 'i' becomes array arithmetic over the batch axis: psum
// over 'i' of a batched value is a psum over its batch axis, now positional (unbatched result);
// axis_index('i') is an iota; all_gather over 'i' moves the batch axis where the gathered axis
// goes; reduce_scatter sums over it. The pass calls these rules for every eqn naming the vmap's
// axis, even when no operand is batched (the constant case: psum of a shared value is size × it).
#include <fmt/format.h>

#include <algorithm>

#include "ir/errors.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

bool names(const std::vector<std::string>& axes, const std::string& name) {
  return !name.empty() && std::find(axes.begin(), axes.end(), name) != axes.end();
}

std::vector<std::string> names_in(const Params& p, const char* key) {
  return lax_ops::axis_names_of(p.at(key));
}

void unsupported_groups(const BatchRuleArgs& a) {
  if (const ParamValue* g = a.eqn.params.find("axis_index_groups"); g && !g->is_none())
    throw UnsupportedError(
        fmt::format("vmap: axis_index_groups not supported in vmap collectives ('{}', from {})",
                    a.eqn.prim->name, a.eqn.source.summarize()));
}

// JAX's `_const(x, size) * x` (psum of a value every member shares: size copies of it).
Atom times_size(JaxprBuilder& b, const Atom& x, int64_t size, bool const_first) {
  Atom c = lax_ops::const_like(b, x, double(size));
  return const_first ? lax_ops::mul(b, c, x) : lax_ops::mul(b, x, c);
}

// psum/pmax/pmin (JAX's _batched_reduction_collective).
BatchedOutputs all_reduce(const BatchRuleArgs& a) {
  unsupported_groups(a);
  const std::string& prim = a.eqn.prim->name;
  const bool is_psum = prim == "psum";
  const std::vector<ParamValue>& axes = a.eqn.params.at("axes").as<ParamTuple>().items;
  const bool ours = names(names_in(a.eqn.params, "axes"), a.axis.name);
  const size_t n = a.args.size();
  const bool any = std::any_of(a.dims.begin(), a.dims.end(), [](BatchDim d) { return bool(d); });
  auto without_ours = [&] {
    ParamTuple t;
    for (const ParamValue& ax : axes)
      if (!(ax.is<std::string>() && ax.as<std::string>() == a.axis.name)) t.items.push_back(ax);
    return t;
  };

  if (!any) {  // only our axis brings the rule here: _constant_reduction
    std::vector<Atom> vals(a.args.begin(), a.args.end());
    ParamTuple rest = without_ours();
    if (!rest.items.empty()) vals = lax_ops::all_reduce(a.b, prim, vals, rest);
    if (is_psum)
      for (Atom& v : vals) v = times_size(a.b, v, a.axis.size, /*const_first=*/true);
    return {vals, std::vector<BatchDim>(n, std::nullopt)};
  }
  const bool positional =
      std::any_of(axes.begin(), axes.end(), [](const ParamValue& ax) { return ax.is<int64_t>(); });
  if (!ours && !positional) {  // a collective over other names: elementwise across the batch
    std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args.begin(), a.args.end()}, a.eqn.params);
    return {outs, {a.dims.begin(), a.dims.end()}};
  }
  // _reduction_with_positional_batcher: batched operands get their batch axis at 0, the
  // positional axes shift past it, and unbatched ones are reduced in a separate eqn.
  std::vector<Atom> vals;
  for (size_t i = 0; i < n; ++i)
    vals.push_back(a.dims[i] ? moveaxis(a.b, a.args[i], *a.dims[i], 0) : a.args[i]);
  std::vector<Atom> unmapped, mapped;
  std::vector<size_t> unmapped_at, mapped_at;
  for (size_t i = 0; i < n; ++i) {
    (a.dims[i] ? mapped : unmapped).push_back(vals[i]);
    (a.dims[i] ? mapped_at : unmapped_at).push_back(i);
  }
  std::vector<std::optional<Atom>> outs(n);
  std::vector<BatchDim> dims(n);
  if (!unmapped.empty()) {
    ParamTuple rest = ours ? without_ours() : ParamTuple{axes};
    if (ours && is_psum)
      for (Atom& v : unmapped) v = times_size(a.b, v, a.axis.size, /*const_first=*/true);
    std::vector<Atom> r = lax_ops::all_reduce(a.b, prim, unmapped, rest);
    for (size_t k = 0; k < r.size(); ++k) outs[unmapped_at[k]] = r[k];
  }
  ParamTuple shifted;
  for (const ParamValue& ax : axes) {
    if (ax.is<int64_t>())
      shifted.items.emplace_back(ax.as<int64_t>() + 1);
    else if (ax.as<std::string>() == a.axis.name)
      shifted.items.emplace_back(int64_t{0});
    else
      shifted.items.push_back(ax);
  }
  std::vector<Atom> r = lax_ops::all_reduce(a.b, prim, mapped, shifted);
  for (size_t k = 0; k < r.size(); ++k) {
    outs[mapped_at[k]] = r[k];
    dims[mapped_at[k]] = ours ? BatchDim() : BatchDim(0);
  }
  BatchedOutputs result{{}, dims};
  for (const std::optional<Atom>& o : outs) result.outs.push_back(*o);
  return result;
}

// axis_index over our axis: each example's index (JAX's _axis_index_batcher).
BatchedOutputs axis_index(const BatchRuleArgs& a) {
  return {{lax_ops::iota(a.b, DType::i32, a.axis.size)}, {0}};
}

// Only our axis, alone, can be batched away (JAX: "Please open a feature request!" otherwise).
void expect_only_ours(const BatchRuleArgs& a) {
  unsupported_groups(a);
  if (names_in(a.eqn.params, "axis_name") != std::vector<std::string>{a.axis.name})
    throw UnsupportedError(fmt::format(
        "vmap: '{}' over several axes including the vmap's '{}' is not supported (from {})",
        a.eqn.prim->name, a.axis.name, a.eqn.source.summarize()));
}

// all_gather or reduce_scatter over another vmap's axis, of a batched operand (JAX's
// _all_gather_batcher, _reduce_scatter_batcher): the gathered (scattered) dimension `key` skips
// the batch axis, which a new untiled axis before it shifts.
BatchedOutputs over_another_axis(const BatchRuleArgs& a, const char* key) {
  int64_t dim = a.eqn.params.get_int(key);
  int64_t d = *a.dims[0];
  if (d <= dim)
    ++dim;
  else if (!a.eqn.params.get_bool("tiled"))
    ++d;
  return {a.b.bind(*a.eqn.prim, {a.args[0]}, with_param(a.eqn.params, key, dim)), {d}};
}

// JAX's _all_gather_batched_collective.
BatchedOutputs all_gather(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  const int64_t dim = p.get_int("all_gather_dimension");
  const bool tiled = p.get_bool("tiled");
  const BatchDim d = a.dims[0];
  if (!names(names_in(p, "axis_name"), a.axis.name))
    return over_another_axis(a, "all_gather_dimension");
  expect_only_ours(a);
  Atom y = a.args[0];
  if (!d) {
    Shape shape = y.aval().shape;
    shape.insert(shape.begin() + dim, a.axis.size);
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < int64_t(shape.size()); ++i)
      if (i != dim) kept.push_back(i);
    y = lax_ops::broadcast_in_dim(a.b, y, shape, kept);
  } else {
    y = moveaxis(a.b, y, *d, dim);
  }
  if (tiled) {  // _foldaxis
    Shape shape = y.aval().shape;
    shape[size_t(dim)] *= shape[size_t(dim) + 1];
    shape.erase(shape.begin() + dim + 1);
    y = lax_ops::reshape(a.b, y, shape);
  }
  return {{y}, {std::nullopt}};
}

// JAX's _reduce_scatter_collective.
BatchedOutputs reduce_scatter(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  const int64_t dim = p.get_int("scatter_dimension");
  const bool tiled = p.get_bool("tiled");
  const BatchDim d = a.dims[0];
  if (!names(names_in(p, "axis_name"), a.axis.name))
    return over_another_axis(a, "scatter_dimension");
  expect_only_ours(a);
  Atom y = d ? lax_ops::reduce_sum(a.b, a.args[0], {*d})
             : times_size(a.b, a.args[0], a.axis.size, /*const_first=*/false);
  if (tiled) {  // _splitaxis
    Shape shape = y.aval().shape;
    const int64_t n = shape[size_t(dim)];
    shape[size_t(dim)] = n / a.axis.size;
    shape.insert(shape.begin() + dim, a.axis.size);
    y = lax_ops::reshape(a.b, y, shape);
  }
  return {{y}, {dim}};
}

// ppermute over our axis: destination j of the batch takes source i's slice (zeros where no pair
// sends to j). JAX takes the slices with a gather of constant indices and allows only full
// permutations; this concatenates slices, which also covers partial ones. Over another axis it
// is elementwise across the batch.
BatchedOutputs ppermute(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  if (!names(names_in(p, "axis_name"), a.axis.name)) {
    std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args[0]}, p);
    return {outs, {a.dims[0]}};
  }
  expect_only_ours(a);
  if (!a.dims[0]) {  // every member holds the same value: a broadcast across the batch
    const Atom xs[] = {broadcast(a.b, a.args[0], a.axis.size, 0)};
    const BatchDim ds[] = {BatchDim(0)};
    return ppermute(BatchRuleArgs{a.b, a.eqn, xs, ds, a.axis});
  }
  const int64_t d = *a.dims[0];
  std::vector<std::optional<int64_t>> source(size_t(a.axis.size));
  for (const auto& [src, dst] : lax_ops::perm_of(p.at("perm"))) {
    if (src >= a.axis.size || dst >= a.axis.size)
      throw UnsupportedError(
          fmt::format("vmap: ppermute pair ({}, {}) is outside the axis '{}' "
                      "of size {} (from {})",
                      src, dst, a.axis.name, a.axis.size, a.eqn.source.summarize()));
    source[size_t(dst)] = src;
  }
  const ShapedArray& aval = a.args[0].aval();
  std::vector<Atom> slices;
  for (const std::optional<int64_t>& src : source) {
    Shape start(aval.shape.size(), 0), limit = aval.shape;
    if (src) {
      start[size_t(d)] = *src;
      limit[size_t(d)] = *src + 1;
      slices.push_back(lax_ops::slice(a.b, a.args[0], start, limit));
    } else {
      Shape one = aval.shape;
      one[size_t(d)] = 1;
      slices.push_back(lax_ops::zeros_like_aval(a.b, ShapedArray(aval.dtype, one)));
    }
  }
  return {{lax_ops::concatenate(a.b, slices, d)}, {d}};
}

// all_to_all over our axis: member i's block j of the split axis becomes member j's i-th part of
// the concat axis. With the batch axis first and the split axis cut into (members, block), that
// is a transpose moving the members-of-blocks axis to the batch position and the batch axis in
// front of the concat axis, then a reshape joining it to that axis. Over another axis, the split
// and concat axes skip the batch axis.
BatchedOutputs all_to_all(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  int64_t split = p.get_int("split_axis"), concat = p.get_int("concat_axis");
  if (!names(names_in(p, "axis_name"), a.axis.name)) {
    const int64_t d = *a.dims[0];
    if (d <= split) ++split;
    if (d <= concat) ++concat;
    Params q = with_param(with_param(p, "split_axis", split), "concat_axis", concat);
    return {a.b.bind(*a.eqn.prim, {a.args[0]}, q), {d}};
  }
  unsupported_groups(a);
  const int64_t n = a.axis.size;
  Atom x = a.dims[0] ? moveaxis(a.b, a.args[0], *a.dims[0], 0) : broadcast(a.b, a.args[0], n, 0);
  const Shape member = [&] {
    Shape s = x.aval().shape;
    s.erase(s.begin());
    return s;
  }();
  const int64_t rank = int64_t(member.size());
  // [batch i] + member dims, with the split dim cut into (j, block).
  Shape cut = {n};
  for (int64_t k = 0; k < rank; ++k) {
    if (k == split) {
      cut.push_back(n);
      cut.push_back(member[size_t(k)] / n);
    } else {
      cut.push_back(member[size_t(k)]);
    }
  }
  x = lax_ops::reshape(a.b, x, cut);
  // Positions in `cut`: i is 0, member dim k is 1 + k (+1 past the split, whose j is 1 + split).
  auto pos = [&](int64_t k) { return 1 + k + (k > split ? 1 : 0) + (k == split ? 1 : 0); };
  std::vector<int64_t> perm = {1 + split};  // j leads: the new batch axis
  Shape out_shape = {n};
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t size = k == split ? member[size_t(k)] / n : member[size_t(k)];
    if (k == concat) {
      perm.push_back(0);
      out_shape.push_back(n * size);
    } else {
      out_shape.push_back(size);
    }
    perm.push_back(pos(k));
  }
  x = lax_ops::transpose(a.b, x, perm);
  return {{lax_ops::reshape(a.b, x, out_shape)}, {0}};
}

}  // namespace

void register_collective_batch_rules() {
  for (const char* prim : {"psum", "pmax", "pmin"}) {
    PassRules& r = define_pass_rules(prim);
    r.batch = all_reduce;
    r.batch_axis_names = [](const Params& p) { return names_in(p, "axes"); };
  }
  PassRules& index = define_pass_rules("axis_index");
  index.batch = axis_index;
  index.batch_axis_names = [](const Params& p) { return names_in(p, "axis_name"); };
  for (const char* prim : {"all_gather", "reduce_scatter"}) {
    PassRules& r = define_pass_rules(prim);
    r.batch = std::string_view(prim) == "all_gather" ? all_gather : reduce_scatter;
    r.batch_axis_names = [](const Params& p) { return names_in(p, "axis_name"); };
  }
  PassRules& permute = define_pass_rules("ppermute");
  permute.batch = ppermute;
  permute.batch_axis_names = [](const Params& p) { return names_in(p, "axis_name"); };
  PassRules& exchange = define_pass_rules("all_to_all");
  exchange.batch = all_to_all;
  exchange.batch_axis_names = [](const Params& p) { return names_in(p, "axis_name"); };
}

}  // namespace cjax
