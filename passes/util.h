// Small helpers shared by the rules of higher-order primitives (remat2, jit).
#pragma once

#include <memory>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// The elements of `xs` whose flag in `keep` equals `want` (JAX's partition_list, one side).
template <class T>
std::vector<T> select(const std::vector<T>& xs, const std::vector<bool>& keep, bool want = true) {
  std::vector<T> out;
  for (size_t i = 0; i < xs.size() && i < keep.size(); ++i)
    if (keep[i] == want) out.push_back(xs[i]);
  return out;
}

// `params` with its `jaxpr` param replaced.
inline Params with_jaxpr(const Params& params, Jaxpr j) {
  Params out = params;
  out.set("jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(j))));
  return out;
}

}  // namespace cjax
