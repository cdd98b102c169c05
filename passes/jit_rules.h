// Registers the autodiff rules of `jit` eqns (jvp, partial eval, transpose).
#pragma once

namespace cjax {

void register_jit_rules();

}  // namespace cjax
