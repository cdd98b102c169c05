// jnp.einsum and jnp.tensordot (jax/_src/numpy/einsum.py, tensor_contractions.py). einsum picks
// its pairwise contraction order as opt_einsum's "optimal" path does for up to four operands
// (the cheapest sequence by opt_einsum's flop count, ties to the first pair tried), names each
// intermediate's dims in opt_einsum's order (by size, then label), and contracts each pair with
// JAX's _einsum: labels only one side has are summed first, and dot_general takes (rhs, lhs)
// when that gives the result's order without a transpose.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/promotion.h"

namespace cjax::numpy {
namespace {

constexpr std::string_view kSymbols = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr size_t kMaxEinsumOperands = 4;

using Labels = std::string;
using SizeOf = std::map<char, int64_t>;

struct Spec {
  std::vector<Labels> inputs;
  Labels output;
};

[[noreturn]] void einsum_error(const SourceInfo& src, const std::string& what) {
  throw_type_error(src, "einsum: " + what);
}

// The subscripts with ellipses spelled out (opt_einsum's parser: unused symbols, right-aligned
// in each operand) and the output made explicit (implicit: the labels used once, sorted).
Spec parse_subscripts(std::string subscripts, std::span<const Array> operands,
                      const SourceInfo& src) {
  subscripts.erase(std::remove(subscripts.begin(), subscripts.end(), ' '), subscripts.end());
  Spec spec;
  const size_t arrow = subscripts.find("->");
  const std::string lhs = subscripts.substr(0, arrow);
  for (size_t i = 0; i <= lhs.size();) {
    const size_t comma = std::min(lhs.find(',', i), lhs.size());
    spec.inputs.push_back(lhs.substr(i, comma - i));
    i = comma + 1;
  }
  if (spec.inputs.size() != operands.size())
    einsum_error(src,
                 fmt::format("{} operands for {} subscripts", operands.size(), spec.inputs.size()));
  std::set<char> used;
  for (char c : subscripts)
    if (kSymbols.find(c) != std::string_view::npos) used.insert(c);
  size_t longest = 0;
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    const Labels& in = spec.inputs[k];
    const size_t dots = in.find("...");
    const size_t named = in.size() - (dots == std::string::npos ? 0 : 3);
    const auto rank = static_cast<size_t>(operands[k].ndim());
    if (dots == std::string::npos ? named != rank : named > rank)
      einsum_error(src, fmt::format("operand {} has {} dimensions, subscripts '{}' name {}", k,
                                    rank, in, named));
    if (dots != std::string::npos) longest = std::max(longest, rank - named);
  }
  Labels ellipsis;
  for (char c : kSymbols)
    if (ellipsis.size() < longest && !used.count(c)) ellipsis += c;
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    Labels& in = spec.inputs[k];
    const size_t dots = in.find("...");
    if (dots == std::string::npos) continue;
    const size_t n = static_cast<size_t>(operands[k].ndim()) - (in.size() - 3);
    in.replace(dots, 3, ellipsis.substr(ellipsis.size() - n));
  }
  for (const Labels& in : spec.inputs)
    for (char c : in)
      if (kSymbols.find(c) == std::string_view::npos)
        einsum_error(src, fmt::format("'{}' is not a subscript label (a-z, A-Z)", c));
  if (arrow != std::string::npos) {
    spec.output = subscripts.substr(arrow + 2);
    if (size_t dots = spec.output.find("..."); dots != std::string::npos)
      spec.output.replace(dots, 3, ellipsis);
  } else {
    std::map<char, int> counts;
    for (const Labels& in : spec.inputs)
      for (char c : in) ++counts[c];
    Labels once;
    for (auto [c, n] : counts)
      if (n == 1 && ellipsis.find(c) == std::string::npos) once += c;
    spec.output = ellipsis + once;
  }
  std::set<char> all;
  for (const Labels& in : spec.inputs) all.insert(in.begin(), in.end());
  for (char c : spec.output)
    if (!all.count(c)) einsum_error(src, fmt::format("output label '{}' names no input dim", c));
  return spec;
}

SizeOf sizes_of(const Spec& spec, std::span<const Array> operands, const SourceInfo& src) {
  SizeOf size;
  for (size_t k = 0; k < operands.size(); ++k)
    for (size_t d = 0; d < spec.inputs[k].size(); ++d) {
      const char c = spec.inputs[k][d];
      const int64_t n = operands[k].shape()[d];
      auto [it, added] = size.emplace(c, n);
      if (!added && it->second != n) {
        if (it->second != 1 && n != 1)
          einsum_error(src, fmt::format("label '{}' has sizes {} and {}", c, it->second, n));
        it->second = std::max(it->second, n);
      }
    }
  return size;
}

std::set<char> label_set(const Labels& l) {
  return {l.begin(), l.end()};
}

// opt_einsum's flop count of contracting the labels `either` (two terms; `inner` when some are
// summed away).
double flops(const std::set<char>& either, bool inner, const SizeOf& size) {
  double n = 1;
  for (char c : either) n *= static_cast<double>(size.at(c));
  return n * (inner ? 2 : 1);
}

// opt_einsum's "optimal" path, as pairs of positions in the shrinking operand list.
std::vector<std::pair<size_t, size_t>> optimal_path(const Spec& spec, const SizeOf& size) {
  const size_t n = spec.inputs.size();
  if (n == 1) return {};
  if (n == 2) return {{0, 1}};
  const std::set<char> output = label_set(spec.output);
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::pair<size_t, size_t>> best_ssa;
  // Search over "static single assignment" ids: inputs 0..n-1, each contraction adds one.
  std::vector<std::set<char>> sets;
  for (const Labels& l : spec.inputs) sets.push_back(label_set(l));
  std::vector<std::pair<size_t, size_t>> path;
  auto iterate = [&](auto& self, std::set<size_t> remaining, double cost) -> void {
    if (remaining.size() == 1) {
      best = cost;
      best_ssa = path;
      return;
    }
    const std::vector<size_t> ids(remaining.begin(), remaining.end());
    for (size_t a = 0; a < ids.size(); ++a)
      for (size_t b = a + 1; b < ids.size(); ++b) {
        const size_t i = ids[a], j = ids[b];
        std::set<char> either = sets[i];
        either.insert(sets[j].begin(), sets[j].end());
        std::set<char> kept = output;
        for (size_t r : ids)
          if (r != i && r != j) kept.insert(sets[r].begin(), sets[r].end());
        std::set<char> result;
        for (char c : either)
          if (kept.count(c)) result.insert(c);
        const double total = cost + flops(either, result.size() < either.size(), size);
        if (total >= best) continue;
        sets.push_back(result);
        path.push_back({i, j});
        std::set<size_t> next = remaining;
        next.erase(i);
        next.erase(j);
        next.insert(sets.size() - 1);
        self(self, next, total);
        path.pop_back();
        sets.pop_back();
      }
  };
  std::set<size_t> all;
  for (size_t k = 0; k < n; ++k) all.insert(k);
  iterate(iterate, all, 0);
  // ssa ids to positions in the list each contraction leaves (opt_einsum's ssa_to_linear).
  std::vector<size_t> alive(n);
  for (size_t k = 0; k < n; ++k) alive[k] = k;
  std::vector<std::pair<size_t, size_t>> linear;
  size_t next_id = n;
  for (auto [i, j] : best_ssa) {
    const size_t pi = static_cast<size_t>(std::find(alive.begin(), alive.end(), i) - alive.begin());
    const size_t pj = static_cast<size_t>(std::find(alive.begin(), alive.end(), j) - alive.begin());
    linear.push_back({std::min(pi, pj), std::max(pi, pj)});
    alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(std::max(pi, pj)));
    alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(std::min(pi, pj)));
    alive.push_back(next_id++);
  }
  return linear;
}

Labels remove_labels(const Labels& names, const std::string& gone) {
  Labels out;
  for (char c : names)
    if (gone.find(c) == std::string::npos) out += c;
  return out;
}

// JAX's sum_uniques: the listed labels summed out.
Array sum_labels(const Array& x, Labels& names, const Labels& labels, const SourceInfo& src) {
  if (labels.empty()) return x;
  std::vector<int64_t> axes;
  for (char c : labels) axes.push_back(static_cast<int64_t>(names.find(c)));
  names = remove_labels(names, labels);
  return lax::reduce_sum(x, axes, src);
}

// JAX's sum_repeats: a label repeated within one operand takes that operand's diagonal, summed
// unless `keep` names it.
Array sum_repeats(Array x, Labels& names, const Labels& keep, const SourceInfo& src) {
  std::map<char, int> counts;
  for (char c : names) ++counts[c];
  for (auto [c, n] : counts) {
    if (n < 2) continue;
    std::vector<int64_t> axes;
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == c) axes.push_back(static_cast<int64_t>(i));
    Array eye;
    for (size_t k = 1; k < axes.size(); ++k) {
      const Array a = lax::broadcasted_iota(DType::i32, x.shape(), axes[0], src);
      const Array b = lax::broadcasted_iota(DType::i32, x.shape(), axes[k], src);
      const Array same = lax::eq(a, b, src);
      eye = eye.defined() ? lax::bitwise_and(eye, same, src) : same;
    }
    x = lax::select(eye, x, zeros_like(x, std::nullopt, src), src);
    const bool kept = keep.find(c) != std::string::npos;
    const std::vector<int64_t> summed(axes.begin(), kept ? axes.end() - 1 : axes.end());
    x = lax::reduce_sum(x, summed, src);
    Labels rest;
    int seen = 0;
    for (char d : names)
      if (d != c || (kept && ++seen == n)) rest += d;
    names = rest;
  }
  return x;
}

// JAX's filter_singleton_dims: a size-1 dim facing a larger one on the other side is squeezed.
Array filter_singletons(const Array& x, Labels& names, const Shape& other,
                        const Labels& other_names, const SourceInfo& src) {
  std::vector<int64_t> squeezed;
  Labels kept;
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t j = other_names.find(names[i]);
    if (x.shape()[i] == 1 && j != std::string::npos && other[j] != 1)
      squeezed.push_back(static_cast<int64_t>(i));
    else
      kept += names[i];
  }
  names = kept;
  return lax::squeeze(x, squeezed, src);
}

}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& arrays, Loc src) {
  if (arrays.empty() || arrays.size() > kMaxEinsumOperands)
    throw UnsupportedError(location_prefix(src) +
                           fmt::format("einsum: {} operands; cjax's einsum takes 1 to {}",
                                       arrays.size(), kMaxEinsumOperands));
  const Spec spec = parse_subscripts(subscripts, arrays, src);
  const SizeOf size = sizes_of(spec, arrays, src);
  std::vector<DTypeAndWeak> types;
  for (const Array& a : arrays) types.push_back(dtype_and_weak(a.aval()));
  const DTypeAndWeak result = result_type(types);
  std::vector<Array> operands = detail::promote_dtypes(arrays, src);
  std::vector<Labels> names = spec.inputs;
  std::vector<std::set<char>> sets;
  for (const Labels& l : names) sets.push_back(label_set(l));
  const std::set<char> output = label_set(spec.output);
  std::vector<std::pair<size_t, size_t>> path = optimal_path(spec, size);
  if (path.empty()) path.push_back({0, 0});  // one operand: one step on it alone
  for (size_t step = 0; step < path.size(); ++step) {
    const bool single = operands.size() == 1;
    std::vector<size_t> picked =
        single ? std::vector<size_t>{0} : std::vector<size_t>{path[step].second, path[step].first};
    // opt_einsum's find_contraction: what the picked operands keep (labels the output or another
    // operand has) and what they sum away.
    std::set<char> contracted, remain = output;
    for (size_t k = 0; k < sets.size(); ++k) {
      if (std::find(picked.begin(), picked.end(), k) != picked.end())
        contracted.insert(sets[k].begin(), sets[k].end());
      else
        remain.insert(sets[k].begin(), sets[k].end());
    }
    std::set<char> kept;
    Labels removed;  // sorted, as JAX sorts contracted_names
    for (char c : contracted) (remain.count(c) ? kept.insert(c), void() : removed.push_back(c));
    Labels result_names;
    if (step + 1 == path.size()) {
      result_names = spec.output;
    } else {
      std::vector<std::pair<int64_t, char>> by_size;
      for (char c : kept) by_size.push_back({size.at(c), c});
      std::sort(by_size.begin(), by_size.end());
      for (auto [n, c] : by_size) result_names += c;
    }
    Array operand;
    Labels operand_names;
    if (single) {
      operand = operands[0];
      operand_names = names[0];
      operands.clear();
      names.clear();
      sets.clear();
      std::map<char, int> counts;
      for (char c : operand_names) ++counts[c];
      Labels uniques;
      for (char c : removed)
        if (counts[c] == 1) uniques += c;
      operand = sum_labels(operand, operand_names, uniques, src);
      operand = sum_repeats(operand, operand_names, result_names, src);
    } else {
      Array lhs = operands[picked[0]];
      Labels lhs_names = names[picked[0]];
      Array rhs = operands[picked[1]];
      Labels rhs_names = names[picked[1]];
      for (size_t k : picked) {  // the larger position first, as opt_einsum pops them
        operands.erase(operands.begin() + static_cast<std::ptrdiff_t>(k));
        names.erase(names.begin() + static_cast<std::ptrdiff_t>(k));
        sets.erase(sets.begin() + static_cast<std::ptrdiff_t>(k));
      }
      lhs = filter_singletons(lhs, lhs_names, rhs.shape(), rhs_names, src);
      rhs = filter_singletons(rhs, rhs_names, lhs.shape(), lhs_names, src);
      auto count = [](const Labels& l, char c) { return std::count(l.begin(), l.end(), c); };
      Labels lhs_uniques, rhs_uniques;
      for (char c : removed) {
        if (count(lhs_names, c) == 1 && count(rhs_names, c) == 0) lhs_uniques += c;
        if (count(rhs_names, c) == 1 && count(lhs_names, c) == 0) rhs_uniques += c;
      }
      lhs = sum_labels(lhs, lhs_names, lhs_uniques, src);
      rhs = sum_labels(rhs, rhs_names, rhs_uniques, src);
      lhs = sum_repeats(lhs, lhs_names, result_names + rhs_names, src);
      rhs = sum_repeats(rhs, rhs_names, result_names + lhs_names, src);
      Labels contract_names, batch_names;
      for (char c : removed)
        if (count(lhs_names, c) || count(rhs_names, c)) contract_names += c;
      for (char c : result_names)
        if (count(lhs_names, c) && count(rhs_names, c)) batch_names += c;
      DotDimensionNumbers lhs_first, rhs_first;
      for (char c : batch_names) {
        lhs_first.lhs_batch.push_back(static_cast<int64_t>(lhs_names.find(c)));
        lhs_first.rhs_batch.push_back(static_cast<int64_t>(rhs_names.find(c)));
      }
      for (char c : contract_names) {
        lhs_first.lhs_contract.push_back(static_cast<int64_t>(lhs_names.find(c)));
        lhs_first.rhs_contract.push_back(static_cast<int64_t>(rhs_names.find(c)));
      }
      rhs_first = {lhs_first.rhs_contract, lhs_first.lhs_contract, lhs_first.rhs_batch,
                   lhs_first.lhs_batch};
      const Labels deleted = batch_names + contract_names;
      const Labels lhs_rest = remove_labels(lhs_names, deleted);
      const Labels rhs_rest = remove_labels(rhs_names, deleted);
      // Both orders are tried, so that one may need no transpose (opt_einsum contracts from the
      // right, so (rhs, lhs) is tried first).
      if (batch_names + rhs_rest + lhs_rest == result_names) {
        operand_names = result_names;
        operand = lax::dot_general(rhs, lhs, rhs_first, result.dtype, src);
      } else {
        operand_names = batch_names + lhs_rest + rhs_rest;
        operand = lax::dot_general(lhs, rhs, lhs_first, result.dtype, src);
      }
    }
    if (operand_names != result_names) {
      std::vector<int64_t> perm;
      for (char c : result_names) perm.push_back(static_cast<int64_t>(operand_names.find(c)));
      operand = lax::transpose(operand, perm, src);
    }
    operands.push_back(operand);
    names.push_back(result_names);
    sets.push_back(label_set(result_names));
  }
  return lax::convert_element_type(operands[0], result.dtype, result.weak, src);
}

Array tensordot(const Array& a, const Array& b, int64_t axes, Loc src) {
  if (axes < 0 || axes > std::min(a.ndim(), b.ndim()))
    throw_type_error(src, fmt::format("tensordot: number of tensordot axes ({}) exceeds input "
                                      "ranks ({} and {})",
                                      axes, a.ndim(), b.ndim()));
  std::vector<int64_t> lhs, rhs;
  for (int64_t k = 0; k < axes; ++k) {
    lhs.push_back(a.ndim() - axes + k);
    rhs.push_back(k);
  }
  return tensordot(a, b, lhs, rhs, src);
}

Array tensordot(const Array& a, const Array& b, const std::vector<int64_t>& a_axes,
                const std::vector<int64_t>& b_axes, Loc src) {
  if (a_axes.size() != b_axes.size())
    throw_type_error(src, fmt::format("tensordot: axes {} and {} differ in length", a_axes.size(),
                                      b_axes.size()));
  DotDimensionNumbers dn;
  for (int64_t x : a_axes)
    dn.lhs_contract.push_back(lax::canonicalize_axis(x, a.ndim(), "tensordot", src));
  for (int64_t x : b_axes)
    dn.rhs_contract.push_back(lax::canonicalize_axis(x, b.ndim(), "tensordot", src));
  const DTypeAndWeak types[] = {dtype_and_weak(a.aval()), dtype_and_weak(b.aval())};
  const DTypeAndWeak result = result_type(types);
  const Array product = lax::dot_general(a, b, dn, result.dtype, src);
  return lax::convert_element_type(product, result.dtype, result.weak, src);
}

}  // namespace cjax::numpy
