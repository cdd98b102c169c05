#include "passes/ad_rules/register.h"

#include <mutex>

namespace cjax {

void ensure_builtin_ad_rules() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_arithmetic_ad_rules();
    register_transcendental_ad_rules();
    register_logical_ad_rules();
    register_select_ad_rules();
    register_structural_ad_rules();
    register_slicing_ad_rules();
    register_gather_scatter_ad_rules();
    register_reduction_ad_rules();
    register_cumulative_ad_rules();
    register_identity_ad_rules();
    register_dot_general_ad_rules();
    register_collective_ad_rules();
    register_custom_ad_rules();
  });
}

}  // namespace cjax
