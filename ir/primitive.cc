#include "ir/primitive.h"

#include <algorithm>

namespace cjax {

std::vector<ParamRef> sorted_params(const Params& params) {
  std::vector<ParamRef> out;
  out.reserve(params.size());
  for (const auto& [k, v] : params) out.push_back({k, &v});
  std::stable_sort(out.begin(), out.end(),
                   [](const ParamRef& a, const ParamRef& b) { return a.key < b.key; });
  return out;
}

}  // namespace cjax
