#include "cjax/autodiff_args.h"

#include <fmt/format.h>

#include "ir/errors.h"

namespace cjax::detail {

FlatArgs flatten_args(std::vector<FlatTree> trees, std::vector<bool> diff) {
  FlatArgs fa;
  fa.trees = std::move(trees);
  fa.diff = std::move(diff);
  for (size_t i = 0; i < fa.trees.size(); ++i) {
    fa.offset.push_back(fa.primals.size());
    fa.num_leaves.push_back(fa.trees[i].leaves.size());
    if (!fa.diff[i]) continue;
    for (const Array& leaf : fa.trees[i].leaves) fa.primals.push_back(leaf);
  }
  return fa;
}

void FlatArgs::forget_values() {
  primals.clear();
  for (FlatTree& t : trees) t.leaves.clear();
}

size_t normalize_argnum(std::string_view api, int argnum, size_t num_args) {
  int n = static_cast<int>(num_args);
  if (argnum < -n || argnum >= n)
    throw UsageError(
        fmt::format("{}: argnums {} is out of range for a function called with {} "
                    "positional arguments",
                    api, argnum, num_args));
  return static_cast<size_t>(argnum < 0 ? argnum + n : argnum);
}

}  // namespace cjax::detail
