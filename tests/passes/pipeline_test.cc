// The two pass pipelines (passes/pipeline.h): what each step leaves, and the dump of every step
// that CJAX_DUMP_PASSES asks for.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cjax/api.h"
#include "ir/sub_jaxprs.h"
#include "passes/pipeline.h"

using namespace cjax;

namespace {

// Eqns of primitive `name` in `j` and in every body below it.
int count_prim(const Jaxpr& j, std::string_view name) {
  int n = 0;
  for (const Eqn& e : j.eqns) {
    n += e.prim->name == name;
    for (const Jaxpr* body : sub_jaxprs(e)) n += count_prim(*body, name);
  }
  return n;
}

// sum over two steps of transpose(a @ b): the transposed dot sits in a scan body.
Jaxpr transposed_dot_in_a_loop() {
  auto f = [](const Array& a, const Array& b) {
    auto step = [&](const Array& c, const std::tuple<>&) {
      return std::pair<Array, std::tuple<>>(c + np::sum(np::transpose(np::dot(a, b))), {});
    };
    return scan(step, np::zeros({}), std::tuple<>{}, 2).first;
  };
  return make_jaxpr(f)(ShapeDtype{DType::f32, {3, 4}}, ShapeDtype{DType::f32, {4, 5}});
}

// Standard error while `fn` runs, with CJAX_DUMP_PASSES=1.
template <class F>
std::string dumped(F fn) {
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  setenv("CJAX_DUMP_PASSES", "1", 1);
  fn();
  unsetenv("CJAX_DUMP_PASSES");
  std::cerr.rdbuf(saved);
  return captured.str();
}

}  // namespace

TEST_CASE("prepare_for_lowering folds transposed dots inside loop bodies") {
  const Jaxpr j = transposed_dot_in_a_loop();
  REQUIRE(count_prim(j, "transpose") == 1);
  const Jaxpr prepared = prepare_for_lowering(j);
  CHECK(count_prim(prepared, "transpose") == 0);
  CHECK(count_prim(prepared, "dot_general") == 1);  // the swapped dot, in the body
  CHECK(count_prim(prepared, "scan") == 1);
}

TEST_CASE("training_step computes only the gradients asked for and recomputes cheap residuals") {
  auto f = [](const Array& w, const Array& x) { return np::sum(np::tanh(w * x) * 3.0f); };
  const Jaxpr j = make_jaxpr(f)(ShapeDtype{DType::f32, {8}}, ShapeDtype{DType::f32, {8}});
  StepOptions jax_programs;
  jax_programs.recompute_cheap_residuals = false;
  const TrainingStep all = training_step(j, jax_programs);
  CHECK(all.bwd.outvars.size() == 2);
  CHECK(all.recomputed_residuals == 0);

  // As compiled code runs it: 1 - tanh(wx)^2 is recomputed from tanh(wx) in the backward program.
  const TrainingStep compiled = training_step(j);
  CHECK(compiled.recomputed_residuals >= 1);
  CHECK(compiled.num_residuals < all.num_residuals + compiled.recomputed_residuals);

  StepOptions only_w;
  only_w.wrt = {true, false};
  const TrainingStep w = training_step(j, only_w);
  CHECK(w.bwd.outvars.size() == 1);
  // The cotangent of x is no longer computed: the backward program does less work.
  CHECK(w.bwd.eqns.size() < compiled.bwd.eqns.size());
}

TEST_CASE("CJAX_DUMP_PASSES prints the jaxpr after every step in order") {
  const Jaxpr j = transposed_dot_in_a_loop();
  const std::string step = dumped([&] {
    StepOptions options;
    options.wrt = {true, false};
    training_step(j, options);
  });
  const std::vector<std::string> steps = {
      "after vjp (forward)", "after vjp (backward)", "after dce of the gradients not asked for",
      "after residual recomputation (forward)", "after residual recomputation (backward)"};
  size_t at = 0;
  for (const std::string& s : steps) {
    INFO(s);
    const size_t found = step.find("-- cjax pipeline: " + s, at);
    REQUIRE(found != std::string::npos);
    at = found;
  }
  CHECK(step.find("{ lambda") != std::string::npos);  // each followed by its jaxpr

  const std::string lowering = dumped([&] { prepare_for_lowering(j); });
  CHECK(lowering.find("after drop forwarding eqns") < lowering.find("after fold transposed dots"));
  CHECK(lowering.find("after fold transposed dots") != std::string::npos);

  // Unset, nothing is printed.
  std::ostringstream quiet;
  std::streambuf* saved = std::cerr.rdbuf(quiet.rdbuf());
  prepare_for_lowering(j);
  std::cerr.rdbuf(saved);
  CHECK(quiet.str().empty());
}
