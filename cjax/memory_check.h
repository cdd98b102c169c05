// Refusing a program that cannot fit in memory before it runs: its modelled peak (the memory
// model of passes/memory, the interpreter's schedule) against what this process may still use
// (runtime::memory_limit: available memory, the cgroup's limit, ulimit -v, CJAX_MEMORY_LIMIT).
// The message names the program's largest array, its size and the limit.
#pragma once

#include <cstddef>
#include <string>

#include "ir/jaxpr.h"

namespace cjax {

struct MemoryNeed {
  size_t peak_bytes = 0;  // arguments included
  std::string largest;    // the largest array: "argument W1 f32[...]" or "f32[...] from <prim> at
                          // <file:line:col>"
  size_t largest_bytes = 0;
};

// What running `jaxpr` once needs (memory::model_eval_peak).
MemoryNeed memory_need(const Jaxpr& jaxpr);
// What a training step needs: `fwd` then `bwd` as vjp_jaxpr returns them (memory::model_step).
MemoryNeed step_memory_need(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals);

// Throws cjax::Error ("not run: the program needs ...") when `need` exceeds what this process
// may use now.
void check_memory_need(const MemoryNeed& need);

inline void check_fits_in_memory(const Jaxpr& jaxpr) {
  check_memory_need(memory_need(jaxpr));
}

}  // namespace cjax
