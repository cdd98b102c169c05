#include "cjax/memory_check.h"

#include <fmt/format.h>

#include <optional>

#include "ir/byte_size.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "passes/memory/memory_model.h"
#include "runtime/system_memory.h"

namespace cjax {
namespace {

// The largest array the program holds: an argument, or a value some eqn (in a body too) makes.
void find_largest(const Jaxpr& j, bool top, MemoryNeed& need) {
  for (size_t i = 0; i < j.invars.size() && top; ++i) {
    const ShapedArray& a = j.invars[i].aval();
    if (a.nbytes() <= need.largest_bytes) continue;
    const bool named = j.debug && i < j.debug->arg_names.size();
    const std::string name = named                         ? j.debug->arg_names[i]
                             : !j.invars[i].hint().empty() ? std::string(j.invars[i].hint())
                                                           : fmt::format("#{}", i);
    need.largest = fmt::format("argument {} {}", name, a.str_short());
    need.largest_bytes = a.nbytes();
  }
  for (const Eqn& e : j.eqns) {
    for (const Var& v : e.outputs)
      if (v.aval().nbytes() > need.largest_bytes) {
        need.largest = fmt::format("{} from {}{}", v.aval().str_short(), e.prim->name,
                                   e.source.known() ? " at " + e.source.position() : "");
        need.largest_bytes = v.aval().nbytes();
      }
    for (const auto& [key, value] : e.params)
      if (value.is<JaxprRef>() && value.as<JaxprRef>())
        find_largest(*value.as<JaxprRef>(), false, need);
  }
}

}  // namespace

MemoryNeed memory_need(const Jaxpr& jaxpr) {
  MemoryNeed need;
  need.peak_bytes = memory::model_eval_peak(jaxpr);
  find_largest(jaxpr, true, need);
  return need;
}

MemoryNeed step_memory_need(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals) {
  MemoryNeed need;
  need.peak_bytes = memory::model_step(fwd, bwd, num_residuals).peak_bytes;
  find_largest(fwd, true, need);
  find_largest(bwd, false, need);
  return need;
}

void check_memory_need(const MemoryNeed& need) {
  const std::optional<runtime::MemoryLimit> limit = runtime::memory_limit();
  if (!limit || need.peak_bytes <= limit->bytes) return;
  throw Error(fmt::format(
      "not run: the program needs {} ({} bytes) at its peak, but {} is {} ({} bytes); its "
      "largest array is {} ({})",
      format_byte_size(need.peak_bytes), need.peak_bytes, limit->source,
      format_byte_size(limit->bytes), limit->bytes, need.largest,
      format_byte_size(need.largest_bytes)));
}

}  // namespace cjax
