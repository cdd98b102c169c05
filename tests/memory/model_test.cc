// The memory model against the runtime's tracking allocator.
#include <catch2/catch.hpp>

#include "examples/registry.h"
#include "ir/call_body.h"
#include "passes/memory/flops.h"
#include "passes/memory/memory_model.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/vjp.h"
#include "tests/memory/measure.h"

namespace cjax::memory {
namespace {

const char* const kPrograms[] = {"tutorial/f",          "tutorial/f2",   "tutorial/f3",
                                 "tutorial/f4",         "tutorial/loss", "tutorial/loss_checkpoint",
                                 "tutorial/loss_named", "block/mlp",     "scan/net_deep"};

TEST_CASE("memory: the model's peak is the interpreter's measured peak, under every policy") {
  const char* name = GENERATE(from_range(std::begin(kPrograms), std::end(kPrograms)));
  {
    const Jaxpr j = examples::get(name).make_jaxpr();
    for (const std::string& policy :
         {std::string(), std::string("nothing_saveable"),
          std::string("dots_with_no_batch_dims_saveable"), std::string("everything_saveable")}) {
      INFO(name << " policy " << (policy.empty() ? "none" : policy));
      const Jaxpr p = policy.empty() ? j : checkpoint_jaxpr(j, policies::by_name(policy));
      VjpResult r = vjp_jaxpr(p);
      StepModel m = model_step(r.fwd, r.bwd, r.num_residuals);
      CHECK(m.peak_bytes == testing::measured_interpreter_peak(r.fwd, r.bwd, r.num_residuals));
      // One point per eqn, calls expanded into their bodies' eqns.
      CHECK(m.live.size() >= r.fwd.eqns.size() + r.bwd.eqns.size() -
                                 static_cast<size_t>(std::count_if(
                                     r.bwd.eqns.begin(), r.bwd.eqns.end(),
                                     [](const Eqn& e) { return call_body(e) != nullptr; })));
      CHECK(m.boundary >= r.fwd.eqns.size());
      CHECK(m.boundary < m.live.size());
      CHECK(*std::max_element(m.live.begin(), m.live.end()) == m.peak_bytes);
    }
  }
}

TEST_CASE("memory: the model bounds the compiled step's peak") {
  // Compiled code fuses elementwise chains (fewer intermediates) and frees each buffer after its
  // last reader, but allocates outputs when a call starts. On programs of real size the
  // model's peak bounds the compiled step's; on the tutorial's toy programs the compiled code
  // adds under 1.5 KiB of its own (its small dots and f32 sums keep their partial sums in f64,
  // compiler/cpu/lower_dot.cc). Every schedule holds the arguments, the residuals and the
  // cotangents at the boundary between the programs: a lower bound.
  struct Case {
    const char* name;
    const char* policy;
    size_t slack;
  };
  const Case c = GENERATE(
      Case{"tutorial/f", "", 1536}, Case{"tutorial/f", "nothing_saveable", 1536},
      Case{"tutorial/loss", "", 1536}, Case{"tutorial/f3", "nothing_saveable", 1536},
      Case{"block/mlp", "", 0}, Case{"scan/net_deep", "", 0},
      // Backward programs that recompute (a remat2 passing its inputs through a barrier:
      // compiled segments once copied them, 32 MiB over the model here).
      Case{"block/mlp_deep", "nothing_saveable", 0}, Case{"block/mlp", "nothing_saveable", 0});
  INFO(c.name << " policy " << c.policy);
  const Jaxpr j = examples::get(c.name).make_jaxpr();
  const std::string policy = c.policy;
  const Jaxpr p = policy.empty() ? j : checkpoint_jaxpr(j, policies::by_name(policy));
  VjpResult r = vjp_jaxpr(p);
  StepModel m = model_step(r.fwd, r.bwd, r.num_residuals);
  size_t cts = 0;
  for (const Atom& o : p.outvars) cts += o.aval().nbytes();
  const size_t compiled = testing::measured_compiled_peak(r.fwd, r.bwd, r.num_residuals);
  CHECK(compiled <= m.peak_bytes + c.slack);
  CHECK(compiled >= m.argument_bytes + m.residual_bytes + cts);
}

TEST_CASE("memory: residual bytes and recomputed FLOPs of the tutorial's f") {
  const Jaxpr f = examples::get("tutorial/f").make_jaxpr();
  StepModel none = model_vjp(f);
  // W1..W3 and x are arguments; sin and cos of the first two layers and cos of the last are kept.
  CHECK(none.argument_bytes == 4 * (20 + 30 + 42 + 4));
  CHECK(none.residual_bytes == 4 * (5 + 5 + 6 + 6 + 7));
  CHECK(none.residual_total_bytes == none.residual_bytes + none.argument_bytes);
  CHECK(none.recompute_flops == 0);
  // Saving the three products: the backward recomputes sin and cos of the first two layers and
  // cos of the last (5+5+6+6+7 elements).
  StepModel dots = model_vjp(checkpoint_jaxpr(f, policies::dots_with_no_batch_dims_saveable()));
  CHECK(dots.residual_bytes == 4 * (5 + 6 + 7));
  CHECK(dots.recompute_flops == 5 + 5 + 6 + 6 + 7);
  // Saving nothing: the products are recomputed too (2*M*K each).
  StepModel nothing = model_vjp(checkpoint_jaxpr(f, policies::nothing_saveable()));
  CHECK(nothing.residual_bytes == 0);
  CHECK(nothing.recompute_flops == 2 * 5 * 4 + 2 * 6 * 5 + 2 * 7 * 6 + 5 + 5 + 6 + 6 + 7);
}

TEST_CASE("memory: FLOPs per primitive") {
  const Jaxpr f = examples::get("tutorial/f").make_jaxpr();
  // three dots (2*5*4 + 2*6*5 + 2*7*6) and three sins
  CHECK(jaxpr_flops(f) == 40 + 60 + 84 + 5 + 6 + 7);
  const Jaxpr loss = examples::get("tutorial/loss").make_jaxpr();
  // three 4x4 dots, two sins, a sub, a square (integer_pow) and a sum over 4 elements
  CHECK(jaxpr_flops(loss) == 3 * 32 + 2 * 4 + 4 + 4 + 4);
}

}  // namespace
}  // namespace cjax::memory
