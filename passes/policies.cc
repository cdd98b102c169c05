#include "passes/policies.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/errors.h"
#include "ir/primitive.h"

namespace cjax::policies {
namespace {

class FnPolicy final : public Policy {
 public:
  FnPolicy(std::string name, PolicyFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  // JAX prints a policy function's repr with its address masked (jax >= 0.10.1).
  std::string repr() const override {
    return fmt::format("<function {} at 0xXXXXXXXXXXXX>", name_);
  }
  PolicyDecision decide(const Primitive& prim, std::span<const ShapedArray> in_avals,
                        const Params& params) const override {
    return fn_(prim, in_avals, params);
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  PolicyFn fn_;
};

bool is_dot(const Primitive& p) {
  return p.name == "dot_general";
}

bool dot_without_batch_dims(const Primitive& p, const Params& params) {
  if (!is_dot(p)) return false;
  auto dn = DotDimensionNumbers::from_param(params.at("dimension_numbers"));
  return dn.lhs_batch.empty() && dn.rhs_batch.empty();
}

bool named_in(const Primitive& p, const Params& params, const std::set<std::string>& names) {
  return p.name == "name" && names.count(params.get_string("name"));
}

std::set<std::string> as_set(std::vector<std::string> v) {
  return {v.begin(), v.end()};
}

}  // namespace

PolicyDecision save() {
  return {Saveability::save, "", ""};
}
PolicyDecision recompute() {
  return {Saveability::recompute, "", ""};
}
PolicyDecision offload(std::string src, std::string dst) {
  return {Saveability::offload, std::move(src), std::move(dst)};
}

PolicyRef make_policy(std::string name, PolicyFn fn) {
  return std::make_shared<FnPolicy>(std::move(name), std::move(fn));
}

PolicyRef make_bool_policy(
    std::string name,
    std::function<bool(const Primitive&, std::span<const ShapedArray>, const Params&)> fn) {
  return make_policy(std::move(name), [fn](const Primitive& p, auto avals, const Params& params) {
    return fn(p, avals, params) ? save() : recompute();
  });
}

PolicyRef everything_saveable() {
  static PolicyRef p = make_bool_policy("everything_saveable", [](auto&&...) { return true; });
  return p;
}
PolicyRef nothing_saveable() {
  static PolicyRef p = make_bool_policy("nothing_saveable", [](auto&&...) { return false; });
  return p;
}
PolicyRef dots_saveable() {
  static PolicyRef p = make_bool_policy(
      "dots_saveable", [](const Primitive& prim, auto, auto&) { return is_dot(prim); });
  return p;
}
PolicyRef checkpoint_dots() {
  return dots_saveable();
}
PolicyRef dots_with_no_batch_dims_saveable() {
  static PolicyRef p = make_bool_policy("dots_with_no_batch_dims_saveable",
                                        [](const Primitive& prim, auto, const Params& params) {
                                          return dot_without_batch_dims(prim, params);
                                        });
  return p;
}
PolicyRef checkpoint_dots_with_no_batch_dims() {
  return dots_with_no_batch_dims_saveable();
}

PolicyRef save_anything_except_these_names(std::vector<std::string> names) {
  auto set = as_set(std::move(names));
  return make_bool_policy("save_anything_except_these_names.<locals>.policy",
                          [set](const Primitive& prim, auto, const Params& params) {
                            return prim.name != "name" || !set.count(params.get_string("name"));
                          });
}
PolicyRef save_anything_but_these_names(std::vector<std::string> names) {
  return save_anything_except_these_names(std::move(names));
}
PolicyRef save_any_names_but_these(std::vector<std::string> names) {
  auto set = as_set(std::move(names));
  return make_bool_policy("save_any_names_but_these.<locals>.policy",
                          [set](const Primitive& prim, auto, const Params& params) {
                            return prim.name == "name" && !set.count(params.get_string("name"));
                          });
}
PolicyRef save_only_these_names(std::vector<std::string> names) {
  auto set = as_set(std::move(names));
  return make_bool_policy("save_only_these_names.<locals>.policy",
                          [set](const Primitive& prim, auto, const Params& params) {
                            return named_in(prim, params, set);
                          });
}

PolicyRef offload_dot_with_no_batch_dims(std::string src, std::string dst) {
  return make_policy("offload_dot_with_no_batch_dims.<locals>.policy",
                     [src, dst](const Primitive& prim, auto, const Params& params) {
                       return dot_without_batch_dims(prim, params) ? offload(src, dst)
                                                                   : recompute();
                     });
}

PolicyRef save_and_offload_only_these_names(std::vector<std::string> saved,
                                            std::vector<std::string> offloaded, std::string src,
                                            std::string dst) {
  auto save_set = as_set(std::move(saved)), offload_set = as_set(std::move(offloaded));
  std::vector<std::string> both;
  std::set_intersection(save_set.begin(), save_set.end(), offload_set.begin(), offload_set.end(),
                        std::back_inserter(both));
  if (!both.empty())
    throw UsageError(fmt::format(
        "save_and_offload_only_these_names: names in both the saved and the offloaded sets: {}",
        fmt::join(both, ", ")));
  return make_policy(
      "save_and_offload_only_these_names.<locals>.policy",
      [save_set, offload_set, src, dst](const Primitive& prim, auto, const Params& params) {
        if (named_in(prim, params, save_set)) return save();
        if (named_in(prim, params, offload_set)) return offload(src, dst);
        return recompute();
      });
}

PolicyRef save_from_both_policies(PolicyRef p1, PolicyRef p2) {
  return make_policy(
      "save_from_both_policies.<locals>.policy",
      [p1, p2](const Primitive& prim, std::span<const ShapedArray> avals, const Params& params) {
        PolicyDecision a = decide(p1, prim, avals, params);
        PolicyDecision b = decide(p2, prim, avals, params);
        if (a.kind == Saveability::offload || b.kind == Saveability::offload)
          throw TypeError(
              fmt::format("save_from_both_policies: both policies must answer save or "
                          "recompute, got offload for '{}'",
                          prim.name));
        return a.kind == Saveability::save || b.kind == Saveability::save ? save() : recompute();
      });
}

PolicyDecision decide(const PolicyRef& policy, const Primitive& prim,
                      std::span<const ShapedArray> in_avals, const Params& params) {
  if (!policy) return recompute();
  PolicyDecision d = policy->decide(prim, in_avals, params);
  switch (d.kind) {
    case Saveability::save:
    case Saveability::recompute:
      return d;
    case Saveability::offload:
      if (d.offload_src.empty() || d.offload_dst.empty())
        throw TypeError(
            fmt::format("policy {} answered Offload for '{}' without memory kinds "
                        "(use policies::offload(src, dst))",
                        policy->repr(), prim.name));
      return d;
  }
  throw TypeError(fmt::format(
      "value returned by the remat policy {} for '{}' is not Save, Recompute or Offload(src, dst)",
      policy->repr(), prim.name));
}

std::vector<std::string> names() {
  return {"everything_saveable",
          "nothing_saveable",
          "dots_saveable",
          "checkpoint_dots",
          "dots_with_no_batch_dims_saveable",
          "checkpoint_dots_with_no_batch_dims",
          "save_anything_except_these_names",
          "save_anything_but_these_names",
          "save_any_names_but_these",
          "save_only_these_names",
          "offload_dot_with_no_batch_dims",
          "save_and_offload_only_these_names"};
}

bool uses_names(const std::string& name) {
  return name == "save_anything_except_these_names" || name == "save_anything_but_these_names" ||
         name == "save_any_names_but_these" || name == "save_only_these_names" ||
         uses_offload_names(name);
}

bool uses_offload_names(const std::string& name) {
  return name == "save_and_offload_only_these_names";
}

PolicyRef by_name(const std::string& name, const std::vector<std::string>& n,
                  const std::vector<std::string>& offload_names) {
  const std::string kSrc = "device", kDst = "pinned_host";
  if (name == "everything_saveable") return everything_saveable();
  if (name == "nothing_saveable") return nothing_saveable();
  if (name == "dots_saveable" || name == "checkpoint_dots") return dots_saveable();
  if (name == "dots_with_no_batch_dims_saveable" || name == "checkpoint_dots_with_no_batch_dims")
    return dots_with_no_batch_dims_saveable();
  if (name == "save_anything_except_these_names" || name == "save_anything_but_these_names")
    return save_anything_except_these_names(n);
  if (name == "save_any_names_but_these") return save_any_names_but_these(n);
  if (name == "save_only_these_names") return save_only_these_names(n);
  if (name == "offload_dot_with_no_batch_dims") return offload_dot_with_no_batch_dims(kSrc, kDst);
  if (name == "save_and_offload_only_these_names")
    return save_and_offload_only_these_names(n, offload_names, kSrc, kDst);
  throw UsageError(
      fmt::format("unknown policy '{}'; valid policies: {}", name, fmt::join(names(), ", ")));
}

}  // namespace cjax::policies
