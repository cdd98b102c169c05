#include "passes/control_flow/register.h"

namespace cjax {

void register_control_flow_rules() {
  register_scan_rules();
  register_cond_rules();
  register_while_rules();
}

}  // namespace cjax
