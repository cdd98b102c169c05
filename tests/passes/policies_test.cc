// The policies' decisions, and the errors a bad policy gets.
#include <catch2/catch.hpp>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "ir/parse/parser.h"
#include "ir/rules/registry.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"

using namespace cjax;
namespace pol = cjax::policies;

namespace {

Saveability decide(const PolicyRef& p, std::string_view prim, const Params& params,
                   std::vector<ShapedArray> avals = {}) {
  return pol::decide(p, get_primitive(prim), avals, params).kind;
}

Params dot(bool batched) {
  DotDimensionNumbers dn{{2}, {1}, {}, {}};
  if (batched) dn = {{2}, {1}, {0}, {0}};
  return lax_params::dot_general(dn, DType::f32);
}

}  // namespace

TEST_CASE("the built-in policies decide like JAX's") {
  Params named_a = lax_params::name("a"), named_b = lax_params::name("b");
  CHECK(decide(pol::everything_saveable(), "sin", {}) == Saveability::save);
  CHECK(decide(pol::nothing_saveable(), "dot_general", dot(false)) == Saveability::recompute);
  CHECK(decide(pol::dots_saveable(), "dot_general", dot(true)) == Saveability::save);
  CHECK(decide(pol::checkpoint_dots(), "sin", {}) == Saveability::recompute);
  CHECK(decide(pol::dots_with_no_batch_dims_saveable(), "dot_general", dot(false)) ==
        Saveability::save);
  CHECK(decide(pol::dots_with_no_batch_dims_saveable(), "dot_general", dot(true)) ==
        Saveability::recompute);
  CHECK(decide(pol::save_anything_except_these_names({"a"}), "name", named_a) ==
        Saveability::recompute);
  CHECK(decide(pol::save_anything_except_these_names({"a"}), "sin", {}) == Saveability::save);
  CHECK(decide(pol::save_any_names_but_these({"a"}), "name", named_b) == Saveability::save);
  CHECK(decide(pol::save_any_names_but_these({"a"}), "sin", {}) == Saveability::recompute);
  CHECK(decide(pol::save_only_these_names({"a"}), "name", named_a) == Saveability::save);
  CHECK(decide(pol::save_only_these_names({"a"}), "name", named_b) == Saveability::recompute);
  auto off = pol::offload_dot_with_no_batch_dims("device", "pinned_host");
  PolicyDecision d = pol::decide(off, get_primitive("dot_general"), {}, dot(false));
  CHECK(d.kind == Saveability::offload);
  CHECK(d.offload_dst == "pinned_host");
  CHECK(decide(off, "dot_general", dot(true)) == Saveability::recompute);
  auto both = pol::save_from_both_policies(pol::dots_saveable(), pol::save_only_these_names({"a"}));
  CHECK(decide(both, "dot_general", dot(true)) == Saveability::save);
  CHECK(decide(both, "name", named_a) == Saveability::save);
  CHECK(decide(both, "sin", {}) == Saveability::recompute);
  CHECK(pol::dots_with_no_batch_dims_saveable()->repr() ==
        "<function dots_with_no_batch_dims_saveable at 0xXXXXXXXXXXXX>");
}

TEST_CASE("a policy's bad answers are errors naming the policy and the primitive") {
  auto bad_kind = pol::make_policy("weird", [](auto&&...) {
    return PolicyDecision{static_cast<Saveability>(7), "", ""};
  });
  CHECK_THROWS_WITH(decide(bad_kind, "sin", {}),
                    "value returned by the remat policy <function weird at 0xXXXXXXXXXXXX> for "
                    "'sin' is not Save, Recompute or Offload(src, dst)");
  auto no_kinds = pol::make_policy("half", [](auto&&...) {
    return PolicyDecision{Saveability::offload, "", ""};
  });
  CHECK_THROWS_AS(decide(no_kinds, "sin", {}), TypeError);
  auto offloading = pol::offload_dot_with_no_batch_dims("device", "pinned_host");
  auto mixed = pol::save_from_both_policies(offloading, pol::dots_saveable());
  CHECK_THROWS_WITH(decide(mixed, "dot_general", dot(false)),
                    "save_from_both_policies: both policies must answer save or recompute, got "
                    "offload for 'dot_general'");
}

TEST_CASE("unknown policy names and overlapping offload sets are usage errors") {
  CHECK_THROWS_AS(pol::by_name("dots_savable"), UsageError);
  try {
    pol::by_name("dots_savable");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("valid policies: everything_saveable, nothing_saveable") !=
          std::string::npos);
  }
  CHECK_THROWS_WITH(
      pol::save_and_offload_only_these_names({"a", "b"}, {"b", "c"}, "device", "pinned_host"),
      "save_and_offload_only_these_names: names in both the saved and the offloaded "
      "sets: b");
}

TEST_CASE("a policy error surfaces when differentiating the checkpoint") {
  Jaxpr f = *parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = sin b in (c,) }");
  auto bad = pol::make_policy("bad", [](auto&&...) {
    return PolicyDecision{static_cast<Saveability>(9), "", ""};
  });
  CHECK_THROWS_AS(vjp_jaxpr(checkpoint_jaxpr(f, bad)), TypeError);
}

TEST_CASE("offloading moves saved values with device_put and back") {
  Jaxpr f = *parse_jaxpr(
      "{ lambda ; a:f32[4,4] b:f32[4]. let c:f32[4] = dot_general[dimension_numbers=(([1], "
      "[0]), ([], [])) preferred_element_type=float32] a b; d:f32[4] = sin c in (d,) }");
  VjpResult r =
      vjp_jaxpr(checkpoint_jaxpr(f, pol::offload_dot_with_no_batch_dims("device", "pinned_host")));
  bool fwd_put = false, bwd_put = false;
  for (const Eqn& e : r.fwd.eqns) fwd_put |= e.prim->name == "device_put";
  for (const Eqn& e : r.bwd.eqns)
    if (e.prim->name == "remat2")
      for (const Eqn& inner : e.params.get_jaxpr("jaxpr")->eqns)
        bwd_put |= inner.prim->name == "device_put";
  CHECK(fwd_put);
  CHECK(bwd_put);
}
