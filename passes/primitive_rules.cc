#include "passes/primitive_rules.h"

#include "ir/rules/per_primitive.h"
#include "passes/rules.h"

namespace cjax {

namespace {

PerPrimitive<PassRules>& table() {
  static PerPrimitive<PassRules> t;
  return t;
}

}  // namespace

const PassRules& pass_rules(const Primitive& prim) {
  static const bool filled = (ensure_pass_rules(), true);
  (void)filled;
  static const PassRules none;
  const PassRules* r = table().find(prim);
  return r ? *r : none;
}

bool splits_body_under_policy(const Primitive& prim) {
  using Rule = CustomRuleResult (*)(const Eqn&, const std::vector<bool>&, const std::vector<bool>&,
                                    const PolicyRef&);
  const Rule* rule = pass_rules(prim).partial_eval_custom.target<Rule>();
  return rule && *rule == &call_partial_eval_custom;
}

PassRules& define_pass_rules(std::string_view name) {
  return table().define(name);
}

}  // namespace cjax
