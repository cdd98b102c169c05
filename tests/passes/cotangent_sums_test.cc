// sum_cotangents_in_order (passes/cotangent_sums.h): a running sum handed to the scan that
// continues it, through remat2 bodies; left alone where another reader would see the change.
#include <catch2/catch.hpp>

#include <string>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/cotangent_sums.h"

using namespace cjax;

namespace {

Jaxpr parsed(const std::string& text) {
  return *parse_jaxpr(text);
}

// A transposed scan's accumulating carry: starts at zeros, adds one row of `c` per step.
const std::string kAccumulate = R"(scan[
      _split_transpose=False
      jaxpr={ lambda ; g:f32[3] h:f32[3]. let i:f32[3] = add_any g h in (i,) }
      length=2
      linear=(False, False)
      num_carry=1
      num_consts=0
      reverse=True
      unroll=1
    ])";

const std::string kZeros =
    "broadcast_in_dim[broadcast_dimensions=() shape=(3,) sharding=None] 0.0:f32[]";

// Evaluates `j` on the interpreter at fixed inputs of its invars' types.
std::vector<float> run(const Jaxpr& j) {
  std::vector<Array> args;
  float next = 0.1f;
  for (const Var& v : j.invars) {
    std::vector<float> data(static_cast<size_t>(v.aval().size()));
    for (float& x : data) x = (next *= 1.37f);
    args.push_back(array(data, v.aval().shape));
  }
  return eval_jaxpr(j, {}, args)[0].to_vector<float>();
}

}  // namespace

TEST_CASE("sum_cotangents_in_order: the zero a scan's sum starts from becomes the running sum") {
  const Jaxpr j = parsed(
      "{ lambda ; a:f32[3] b:f32[3] c:f32[2,3]. let\n d:f32[3] = mul a b\n e:f32[3] = " + kZeros +
      "\n f:f32[3] = " + kAccumulate + " e c\n j:f32[3] = add_any d f\n in (j,) }");
  const Jaxpr t = sum_cotangents_in_order(j);
  verify(t);
  REQUIRE(t.eqns.size() == 2);  // the zeros and the add_any are gone
  CHECK(t.eqns[1].prim->name == "scan");
  CHECK(t.eqns[1].inputs[0].var() == t.eqns[0].outputs[0]);  // starts from a * b
  CHECK(t.outvars[0].var() == t.eqns[1].outputs[0]);
  // ((a*b + c[1]) + c[0]) instead of a*b + (c[1] + c[0]): equal here within rounding.
  const std::vector<float> before = run(j), after = run(t);
  for (size_t i = 0; i < before.size(); ++i) CHECK(after[i] == Approx(before[i]).epsilon(1e-6));
}

TEST_CASE(
    "sum_cotangents_in_order: a sum inside a remat2 body takes the running sum as an operand") {
  const Jaxpr j = parsed(
      "{ lambda ; a:f32[3] c:f32[2,3]. let\n"
      " f:f32[3] = remat2[differentiated=True jaxpr={ lambda ; k:f32[2,3]. let\n"
      "   e:f32[3] = " +
      kZeros + "\n   l:f32[3] = " + kAccumulate +
      " e k\n in (l,) }\n"
      "   policy=None prevent_cse=True] c\n"
      " j:f32[3] = add_any a f\n in (j,) }");
  const Jaxpr t = sum_cotangents_in_order(j);
  verify(t);
  REQUIRE(t.eqns.size() == 1);
  const Eqn& call = t.eqns[0];
  REQUIRE(call.inputs.size() == 2);
  CHECK(call.inputs[1].var() == t.invars[0]);
  const Jaxpr& body = *call.params.get_jaxpr("jaxpr");
  REQUIRE(body.eqns.size() == 1);  // the body's zeros are gone
  CHECK(body.eqns[0].inputs[0].var() == body.invars[1]);
  const std::vector<float> before = run(j), after = run(t);
  for (size_t i = 0; i < before.size(); ++i) CHECK(after[i] == Approx(before[i]).epsilon(1e-6));
}

TEST_CASE("sum_cotangents_in_order: a partial sum read elsewhere is left as it is") {
  // The scan's total is also an output: starting it from `d` would change that output.
  const std::string shared = "{ lambda ; d:f32[3] c:f32[2,3]. let\n e:f32[3] = " + kZeros +
                             "\n f:f32[3] = " + kAccumulate +
                             " e c\n j:f32[3] = add_any d f\n in (j, f) }";
  CHECK(to_string(sum_cotangents_in_order(parsed(shared))) == to_string(parsed(shared)));
  // The body reads its carry twice: not a sum.
  const std::string twice = "{ lambda ; d:f32[3] c:f32[2,3]. let\n e:f32[3] = " + kZeros +
                            "\n f:f32[3] = scan[_split_transpose=False jaxpr={ lambda ; g:f32[3] "
                            "h:f32[3]. let i:f32[3] = add_any g h\n m:f32[3] = mul i g in (m,) } "
                            "length=2 linear=(False, False) num_carry=1 num_consts=0 reverse=True "
                            "unroll=1] e c\n j:f32[3] = add_any d f\n in (j,) }";
  CHECK(to_string(sum_cotangents_in_order(parsed(twice))) == to_string(parsed(twice)));
}
