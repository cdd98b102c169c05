#include "cjax/checkpoint.h"

#include <fmt/format.h>

#include "ir/errors.h"
#include "passes/memory/budget_plan.h"

namespace cjax::detail {

std::optional<RematTrace> RematCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void RematCache::insert(const std::string& key, const RematTrace& t) {
  for (const Array& c : t.consts)
    if (!c.is_concrete()) return;
  std::lock_guard<std::mutex> lock(mu_);
  entries_.emplace(key, t);
}

size_t RematCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

RematTrace make_remat_trace(TracedFunction traced, std::any out_proto, const PolicyRef& policy) {
  Jaxpr j = std::move(traced.closed.jaxpr);
  // JAX's convert_constvars_jaxpr: the constants become the leading inputs of the remat2 eqn.
  const size_t num_consts = j.constvars.size();
  convert_constvars(j);
  j.debug = nullptr;
  // A memory budget is planned here, once per trace; another policy keeps the traced body.
  memory::CheckpointBody planned = memory::plan_checkpoint(std::move(j), policy, num_consts);
  RematTrace t;
  t.jaxpr = std::make_shared<const Jaxpr>(std::move(planned.body));
  t.consts = std::move(traced.closed.consts);
  t.out_proto = std::move(out_proto);
  t.policy = std::move(planned.policy);
  return t;
}

std::vector<Array> bind_remat(const RematTrace& t, const std::vector<FlatTree>& flat,
                              bool prevent_cse, const SourceInfo& src) {
  std::vector<Array> inputs = t.consts;
  for (const FlatTree& ft : flat) inputs.insert(inputs.end(), ft.leaves.begin(), ft.leaves.end());
  Params params{{"differentiated", false},
                {"jaxpr", t.jaxpr},
                {"policy", t.policy ? ParamValue(t.policy) : ParamValue(NoneParam{})},
                {"prevent_cse", prevent_cse}};
  return cjax::bind("remat2", inputs, std::move(params), src);
}

Array checkpoint_name_leaf(const Array& x, const std::string& name, const SourceInfo& src) {
  return bind1("name", {x}, Params{{"name", name}}, src);
}

}  // namespace cjax::detail
