#include "passes/batch_rules/register.h"

namespace cjax {

// ensure_pass_rules() calls this once.
void register_batch_rules() {
  register_elementwise_batch_rules();
  register_structural_batch_rules();
  register_reduction_batch_rules();
  register_dot_general_batch_rules();
  register_call_batch_rules();
  register_control_flow_batch_rules();
  register_sequential_batch_rules();
  register_gather_scatter_batch_rules();
  register_custom_batch_rules();
  register_collective_batch_rules();
  register_random_batch_rules();
}

}  // namespace cjax
