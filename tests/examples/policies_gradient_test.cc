// For every built-in example and every policy, checkpointing the whole function with the policy
// changes what the backward pass stores, never the gradient.
#include <catch2/catch.hpp>

#include "examples/registry.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"

using namespace cjax;

namespace {

std::vector<std::vector<double>> gradients(const Jaxpr& f,
                                           const std::vector<runtime::Buffer>& args) {
  VjpResult r = vjp_jaxpr(f);
  std::vector<runtime::Buffer> fwd = runtime::eval_jaxpr(r.fwd, args);
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + static_cast<std::ptrdiff_t>(f.outvars.size()),
                                      fwd.end());
  for (const Atom& o : f.outvars) bwd_in.push_back(runtime::Buffer::full(o.aval(), 1.0));
  std::vector<std::vector<double>> out;
  for (const auto& g : runtime::eval_jaxpr(r.bwd, bwd_in)) out.push_back(g.to_doubles());
  return out;
}

}  // namespace

TEST_CASE("every policy on every example gives the un-checkpointed gradient") {
  const std::vector<std::string> names{"a", "layer0_output"}, offload{"b", "layer1_output"};
  int checked = 0;
  for (const auto& ex : examples::all()) {
    // The computation-block examples (random/dropout_mlp is one too) and the deep scans take
    // seconds on the reference interpreter (the 200-step Euler scans too); their policies are
    // covered by the same code paths on the smaller programs (tests/frontend/random_remat_test.cc:
    // dropout under every policy).
    if (ex.name.rfind("block/", 0) == 0 || ex.name == "random/dropout_mlp" ||
        ex.name.find("_deep") != std::string::npos || ex.name.rfind("loop/euler", 0) == 0)
      continue;
    Jaxpr f = ex.make_jaxpr();
    auto args = ex.default_inputs();
    auto want = gradients(f, args);
    for (const std::string& policy : policies::names()) {
      INFO(ex.name << " with " << policy);
      Jaxpr checkpointed = checkpoint_jaxpr(f, policies::by_name(policy, names, offload));
      auto got = gradients(checkpointed, args);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i].size() == want[i].size());
        for (size_t k = 0; k < got[i].size(); ++k)
          CHECK(got[i][k] == Approx(want[i][k]).epsilon(1e-5).margin(1e-6));
      }
      ++checked;
    }
  }
  CHECK(checked == 24 * static_cast<int>(policies::names().size()));
}
