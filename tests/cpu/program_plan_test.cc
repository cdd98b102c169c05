// A compiled program's plan as the compilation cache keeps it (compiler/cpu/program_plan.h): its
// text reads back as the same plan, runtime calls rebuilt from their jaxprs; a damaged plan is
// refused with the line of what is wrong, never run.
#include "compiler/cpu/program_plan.h"

#include <catch2/catch.hpp>
#include <string>

#include "cjax/api.h"
#include "ir/errors.h"
#include "ir/print/printer.h"

namespace cjax {
namespace program_plan_test {

namespace jnp = cjax::numpy;

// A plan of two functions: `seg0` takes the two inputs and returns a product (through a BLAS
// call) and a value it forwards; `seg1` takes the product.
lower::ProgramPlan sample_plan() {
  lower::ProgramPlan plan;
  const Jaxpr dot = make_jaxpr([](const Array& a, const Array& b) { return jnp::matmul(a, b); })(
      jnp::ones({8, 4}), jnp::ones({4, 2}));
  plan.calls.push_back(lower::runtime_call_from_text(to_string(dot)));
  plan.functions.push_back(
      {"seg0", nullptr, {{DType::f32, {8, 2}}, {DType::f32, {8, 4}}}, {-1, 0}});
  plan.functions.push_back({"seg1", nullptr, {{DType::f32, {}}}, {-1}});
  plan.steps.push_back({0, {0, 1}, {2, 3}, {1}});
  plan.steps.push_back({1, {2}, {4}, {2}});
  plan.num_slots = 5;
  plan.output_slots = {4, 3};
  return plan;
}

TEST_CASE("a plan's text reads back as the same plan") {
  const lower::ProgramPlan plan = sample_plan();
  const std::string text = lower::write_plan(plan);
  const lower::ProgramPlan back = lower::read_plan(text, 2, 2);
  REQUIRE(back.functions.size() == 2);
  CHECK(back.functions[0].name == "seg0");
  CHECK(back.functions[0].out_avals[0].str_short() == "f32[8,2]");
  CHECK(back.functions[0].forwarded == std::vector<int>{-1, 0});
  CHECK(back.functions[1].out_avals[0].str_short() == "f32[]");
  REQUIRE(back.steps.size() == 2);
  CHECK(back.steps[0].inputs == std::vector<size_t>{0, 1});
  CHECK(back.steps[0].outputs == std::vector<size_t>{2, 3});
  CHECK(back.steps[1].release == std::vector<size_t>{2});
  CHECK(back.num_slots == 5);
  CHECK(back.output_slots == std::vector<size_t>{4, 3});
  REQUIRE(back.calls.size() == 1);
  CHECK(back.calls[0]->describe() == plan.calls[0]->describe());
  CHECK(back.calls[0]->describe().rfind("dot_general via BLAS", 0) == 0);
  CHECK(lower::write_plan(back) == text);
}

TEST_CASE("a damaged plan is refused with its line, never run") {
  const std::string text = lower::write_plan(sample_plan());
  auto refused = [](const std::string& t, const std::string& what) {
    CHECK_THROWS_WITH(lower::read_plan(t, 2, 2), Catch::Contains(what));
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  refused(replaced("cjax-cpu-plan 1", "cjax-cpu-plan 2"), "plan line 1: expected");
  refused(replaced("step 1 in 2", "step 7 in 2"), "function 7 is beyond the plan's 2");
  refused(replaced("step 1 in 2", "step 1 in 9"), "slot 9 is beyond the plan's 5 slots");
  refused(replaced("f32[8,2]", "q32[8,2]"), "'q32' names no dtype");
  refused(replaced("f32[8,2]", "f32[8,-2]"), "is not an integer");
  refused(replaced("outputs 4 3", "outputs 4"), "expected 2 output slots");
  refused(replaced("slots 5", "slots 1"), "fewer slots than the program has inputs");
  refused(text.substr(0, text.size() / 2), "plan line");
  refused(text + "more\n", "text after the last runtime call");
  refused(replaced("dot_general", "no_such_primitive"), "plan line");
  CHECK_THROWS_AS(lower::read_plan(text, 2, 3), Error);  // another program's plan
}

TEST_CASE("a runtime call's text names one eqn the back end can run") {
  CHECK_THROWS_WITH(lower::runtime_call_from_text("{ lambda ; a:f32[3]. let  in (a,) }"),
                    Catch::Contains("holds 0 eqns, not one"));
  const auto kernel = lower::runtime_call_from_text(
      "{ lambda ; a:i32[3] b:i32[3]. let c:i32[3] = div a b in (c,) }");
  CHECK(kernel->describe() == "div via the interpreter's kernel");
}

}  // namespace program_plan_test
}  // namespace cjax
