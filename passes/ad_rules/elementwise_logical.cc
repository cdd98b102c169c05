// Primitives whose outputs carry no tangent (JAX's defjvp_zero): comparisons, bitwise logic,
// rounding, sign, is_finite, argmax/argmin and stop_gradient. Their inputs may be floating
// point, so the jvp pass needs a rule that answers "zero" rather than "unsupported".
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"

namespace cjax {

void register_logical_ad_rules() {
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor", "floor",
                           "ceil", "round", "is_finite", "argmax", "argmin", "stop_gradient"})
    ad::defjvp_zero(name);
}

}  // namespace cjax
