// The residuals of the tutorial's other examples, derived from the semantics (JAX's printed
// outputs for these are version-dependent or not recorded). Each expected line is explained.
// Lines are compared up to " from " plus the function name, as for JAX's outputs.
#include <catch2/catch.hpp>

#include <sstream>

#include "examples/registry.h"
#include "ir/parse/parser.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"

using namespace cjax;

namespace {

std::vector<std::string> residuals_of(const std::string& example) {
  Jaxpr f = examples::get(example).make_jaxpr();
  VjpResult r = vjp_jaxpr(f);
  std::vector<std::string> out;
  for (const auto& s : saved_residuals(r.fwd, r.num_residuals, f.debug->arg_names)) {
    std::string d = s.description;
    size_t from = d.find(" from "), paren = d.rfind(" (");
    if (d.rfind("from the argument", 0) != 0 && from != std::string::npos &&
        paren != std::string::npos)
      d = d.substr(0, from) + d.substr(paren);
    out.push_back(s.aval.str_short() + " " + d);
  }
  return out;
}

}  // namespace

TEST_CASE("f4: save_only_these_names('a') saves the arguments and the value named a") {
  CHECK(residuals_of("tutorial/f4") ==
        std::vector<std::string>{
            // The checkpoint's inputs are always available to the backward pass.
            "f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
            "f32[7,6] from the argument W3", "f32[4] from the argument x",
            // The first layer's output, named 'a', is the only saveable value; the backward pass
            // reads it (the second layer's dot_general tangent needs it), so it is saved. The
            // layers after it are recomputed from it, b and c included.
            "f32[5] named 'a' (f4)"});
}

TEST_CASE("loss_checkpoint: only the three dots are saved") {
  CHECK(residuals_of("tutorial/loss_checkpoint") ==
        std::vector<std::string>{
            "f32[4,4] from the argument params[0]", "f32[4,4] from the argument params[1]",
            "f32[4,4] from the argument params[2]", "f32[4] from the argument x",
            // y is an input of the checkpoint, read by the recomputed (predict - y).
            "f32[4] from the argument y",
            // dot_generals without batch dims are saveable: the two layers' dots (the sin and
            // cos of each are recomputed from them) and the last dot (predict's output, from
            // which d = predict - y and 2*d are recomputed).
            "f32[4] output of dot_general (layer)", "f32[4] output of dot_general (layer)",
            "f32[4] output of dot_general (predict)"});
}

TEST_CASE("loss_named without checkpoint: names change nothing but the report") {
  CHECK(residuals_of("tutorial/loss_named") ==
        std::vector<std::string>{
            // y is not read by the backward pass: d(sum(d**2))/d(predict) = 2d needs only d.
            "f32[4,4] from the argument params[0]", "f32[4,4] from the argument params[1]",
            "f32[4,4] from the argument params[2]", "f32[4] from the argument x",
            // layer 0: cos for the sin's jvp; its named output feeds layer 1's dot tangent.
            "f32[4] output of cos (layer)", "f32[4] named 'layer0_output' (predict)",
            // layer 1: likewise; its named output feeds the last dot's tangent.
            "f32[4] output of cos (layer)", "f32[4] named 'layer1_output' (predict)",
            // integer_pow's jvp saves 2 * d.
            "f32[4] output of mul (loss_named)"});
}

TEST_CASE("loss_checkpoint2: every name but layer1_output may be saved") {
  CHECK(residuals_of("tutorial/loss_checkpoint2") ==
        std::vector<std::string>{
            "f32[4,4] from the argument params[0]", "f32[4,4] from the argument params[1]",
            "f32[4,4] from the argument params[2]", "f32[4] from the argument x",
            "f32[4] from the argument y",
            // Only named values are saveable, layer1_output excluded: layer0_output is saved,
            // and everything after it is recomputed from it.
            "f32[4] named 'layer0_output' (predict)"});
}

TEST_CASE("recursive8: the argument plus one value per level of recursion") {
  std::vector<std::string> r = residuals_of("tutorial/recursive8");
  REQUIRE(r.size() == 4);
  // x is the input of the outermost checkpoint (recomputation starts from it).
  CHECK(r[0] == "f32[] from the argument x");
  // The outer level runs f1 = the first half un-checkpointed on the output of checkpoint(f2):
  // that output (a sin) is f1's input, and f1 = sin∘sin∘... recursively saves a cos and the
  // output of its own inner checkpoint; the innermost pair saves one cos.
  CHECK(r[1].rfind("f32[] output of sin", 0) == 0);
  CHECK(r[2].rfind("f32[] output of cos", 0) == 0);
  CHECK(r[3].rfind("f32[] output of cos", 0) == 0);
}

TEST_CASE("the exercise saves the two matmuls") {
  CHECK(residuals_of("exercise/checkpoint_dot_policy") ==
        std::vector<std::string>{"f32[4,4] from the argument w1", "f32[4,4] from the argument w2",
                                 "f32[8,4] from the argument x",
                                 // x @ w1 (relu's jvp recomputes its mask from it) and (...) @ w2
                                 // (the square's jvp recomputes 2y from it).
                                 "f32[8,4] output of dot_general (dot_pipeline)",
                                 "f32[8,4] output of dot_general (dot_pipeline)"});
}

TEST_CASE("lax.pad's instantiated zero tangent is a residual the backward pass never reads") {
  // pad is linear in its operand and its padding value; JAX's linear_jvp instantiates the
  // padding value's zero tangent as a constant array, which linearization captures as a residual
  // (JAX's jnp.pad gradient returns it from the forward jit as `0.0:f32[]`).
  JaxprRef f = parse_jaxpr(
      "{ lambda ; a:f32[2,3]. let\n"
      "    c:f32[3,6] = pad[padding_config=((1, 0, 0), (2, 1, 0))] a 1.5:f32[]\n"
      "  in (c,) }");
  Jaxpr g = *f;
  VjpResult r = vjp_jaxpr(g);
  REQUIRE(r.num_residuals == 1);
  const Atom& res = r.fwd.outvars.back();
  REQUIRE(res.is_literal());
  CHECK(res.literal().as_double() == 0.0);
  CHECK(res.aval().str_short() == "f32[]");
  const auto saved = saved_residuals(r.fwd, r.num_residuals, std::vector<std::string>{"a"});
  REQUIRE(saved.size() == 1);
  CHECK(saved[0].description == "from a literal");
  // The backward pass reads the residual and the cotangent, and un-pads the cotangent.
  CHECK(r.bwd.invars.size() == 2);
  CHECK(r.bwd.outvars.size() == 1);
  CHECK(r.bwd.outvars[0].aval().str_short() == "f32[2,3]");
}
