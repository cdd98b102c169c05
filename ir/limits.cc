#include "ir/limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace cjax {

std::string nesting_limit_message() {
  return fmt::format("nesting deeper than {} levels is not supported", kMaxNesting);
}

std::string expansion_limit_message() {
  return fmt::format(
      "the program expands to more than {} equations (a nested jaxpr counts at each use)",
      kMaxExpandedEqns);
}

namespace {

using Memo = std::unordered_map<const Jaxpr*, int64_t>;

int64_t count(const Jaxpr& j, Memo& memo);

int64_t count_param(const ParamValue& v, Memo& memo) {
  if (v.is<JaxprRef>()) return v.as<JaxprRef>() ? count(*v.as<JaxprRef>(), memo) : 0;
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  int64_t n = 0;
  if (items)
    for (const ParamValue& x : *items) n = std::min(n + count_param(x, memo), kMaxExpandedEqns + 1);
  return n;
}

int64_t count(const Jaxpr& j, Memo& memo) {
  if (auto it = memo.find(&j); it != memo.end()) return it->second;
  int64_t n = 0;
  for (const Eqn& e : j.eqns) {
    n = std::min(n + 1, kMaxExpandedEqns + 1);
    for (const auto& [key, value] : e.params)
      n = std::min(n + count_param(value, memo), kMaxExpandedEqns + 1);
  }
  memo.emplace(&j, n);
  return n;
}

}  // namespace

int64_t expanded_eqn_count(const Jaxpr& jaxpr) {
  Memo memo;
  return count(jaxpr, memo);
}

std::string shape_limit_error(DType dtype, const Shape& shape) {
  // The rank first: the other messages print the shape, which must stay one short line.
  if (static_cast<int64_t>(shape.size()) > kMaxRank)
    return fmt::format("rank {} exceeds the limit of {} dimensions", shape.size(), kMaxRank);
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return fmt::format("{} has a negative dimension", ShapedArray(dtype, shape).str_short());
    if (d > 0 && __builtin_mul_overflow(count, d, &count))
      return fmt::format("{} has too many elements: the product of its dimensions overflows int64",
                         ShapedArray(dtype, shape).str_short());
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(itemsize(dtype)), &bytes))
    return fmt::format("{} is too large: its size in bytes overflows int64",
                       ShapedArray(dtype, shape).str_short());
  return "";
}

}  // namespace cjax
