#include "ir/liveness.h"

namespace cjax {

std::unordered_map<const void*, size_t> last_reads(const Jaxpr& jaxpr) {
  std::unordered_map<const void*, size_t> last;
  for (size_t k = 0; k < jaxpr.eqns.size(); ++k)
    for (const Atom& a : jaxpr.eqns[k].inputs)
      if (a.is_var()) last[a.var().id()] = k;
  for (const Atom& a : jaxpr.outvars)
    if (a.is_var()) last[a.var().id()] = kReadByOutputs;
  return last;
}

}  // namespace cjax
