// One switch that registers every built-in pass rule (autodiff rules of each primitive family,
// and the rules of remat2) exactly once; each pass calls it before looking rules up.
#pragma once

namespace cjax {

void ensure_pass_rules();

}  // namespace cjax
