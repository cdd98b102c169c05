#include "passes/rules.h"

#include <mutex>

#include "passes/ad_rules/register.h"
#include "passes/batch_rules/register.h"
#include "passes/control_flow/register.h"
#include "passes/jit_rules.h"
#include "passes/remat.h"
#include "passes/shard_map_rules.h"

namespace cjax {

void ensure_pass_rules() {
  static std::once_flag once;
  std::call_once(once, [] {
    ensure_builtin_ad_rules();
    register_remat_rules();
    register_jit_rules();
    register_shard_map_rules();
    register_control_flow_rules();
    register_batch_rules();
  });
}

}  // namespace cjax
