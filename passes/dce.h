// Dead-code elimination: drops eqns none of whose outputs is needed.
#pragma once

#include <optional>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

struct DceResult {
  Jaxpr jaxpr;                    // keeps only the outputs marked used
  std::vector<bool> used_inputs;  // which invars the kept eqns read
  bool changed = false;           // an eqn was dropped or pruned (outputs dropped do not count)
};

// `used_outputs[i]`: keep output i. Eqns of primitives with effects do not exist in cjax, so every
// eqn whose outputs are unused is removed. Invars are kept (see used_inputs to prune them).
DceResult dce(const Jaxpr& jaxpr, const std::vector<bool>& used_outputs);
// dce keeping every output.
Jaxpr dce(const Jaxpr& jaxpr);

// The dce rule of jit and remat2 (JAX's dce rules for pjit and remat): the body is DCE'd and the
// outputs and inputs it no longer needs are dropped; nullopt when nothing changes. Bodies with
// constvars (possible in parsed text) are kept whole.
std::optional<Eqn> call_dce(const Eqn& eqn, const std::vector<bool>& used_outputs);

}  // namespace cjax
