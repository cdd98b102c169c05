#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

TEST_CASE("the table holds the built-in primitives") {
  auto names = builtin_primitive_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const char* name : {"neg",
                           "sin",
                           "cos",
                           "tan",
                           "tanh",
                           "exp",
                           "log",
                           "log1p",
                           "expm1",
                           "sqrt",
                           "rsqrt",
                           "logistic",
                           "erf",
                           "abs",
                           "sign",
                           "floor",
                           "ceil",
                           "is_finite",
                           "not",
                           "square",
                           "integer_pow",
                           "reduce_precision",
                           "name",
                           "optimization_barrier",
                           "copy",
                           "add",
                           "sub",
                           "mul",
                           "div",
                           "rem",
                           "pow",
                           "max",
                           "min",
                           "atan2",
                           "and",
                           "or",
                           "xor",
                           "add_any",
                           "eq",
                           "ne",
                           "lt",
                           "le",
                           "gt",
                           "ge",
                           "select_n",
                           "clamp",
                           "convert_element_type",
                           "broadcast_in_dim",
                           "reshape",
                           "transpose",
                           "squeeze",
                           "expand_dims",
                           "concatenate",
                           "slice",
                           "dynamic_slice",
                           "dynamic_update_slice",
                           "iota",
                           "pad",
                           "reduce_sum",
                           "reduce_max",
                           "reduce_min",
                           "reduce_prod",
                           "argmax",
                           "argmin",
                           "cumsum",
                           "cumprod",
                           "cummax",
                           "dot_general",
                           "jit",
                           "remat2",
                           "custom_jvp_call",
                           "custom_vjp_call",
                           "cond",
                           "while",
                           "scan",
                           "device_put"}) {
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), std::string_view(name)) != names.end());
    const Primitive* p = find_primitive(name);
    REQUIRE(p);
    CHECK(p->name == name);
    CHECK(p == &get_primitive(name));  // one object per name
  }
  // Retired names are not listed, though they resolve (see canonicalize_test.cc).
  CHECK(std::find(names.begin(), names.end(), "pjit") == names.end());
  // jax 0.11.2 prints `b:f32[3] = stop_gradient a` (tests/golden/jax_0_11_2/new_prims.md).
  CHECK(find_primitive("stop_gradient") != nullptr);
}

TEST_CASE("higher-order primitives are marked") {
  for (const char* name :
       {"jit", "remat2", "custom_jvp_call", "custom_vjp_call", "cond", "while", "scan"})
    CHECK(get_primitive(name).higher_order);
  CHECK_FALSE(get_primitive("sin").higher_order);
}

TEST_CASE("unknown primitives") {
  CHECK(find_primitive("triangular_solve") == nullptr);
  CHECK_THROWS_AS(get_primitive("triangular_solve"), UnsupportedError);
  CHECK_THROWS_WITH(get_primitive("triangular_solve"), "unknown primitive 'triangular_solve'");
}

TEST_CASE("opaque primitives are interned by name") {
  const Primitive& a = opaque_primitive("random_wrap");
  const Primitive& b = opaque_primitive("random_wrap");
  const Primitive& c = opaque_primitive("random_split");
  CHECK(&a == &b);
  CHECK(&a != &c);
  CHECK(a.opaque);
  CHECK(a.name == "random_wrap");
  CHECK_FALSE(a.shape_rule);
  CHECK_THROWS_AS(infer_avals(a, {}, {}), UnsupportedError);
  CHECK_THROWS_WITH(infer_avals(a, {}, {}), "random_wrap: no shape rule for an opaque primitive");
}

TEST_CASE("opaque interning is thread-safe") {
  std::vector<const Primitive*> seen(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < 50; ++i) opaque_primitive(fmt::format("p{}", i));
      seen[t] = &opaque_primitive("shared_across_threads");
    });
  for (auto& th : threads) th.join();
  for (const Primitive* p : seen) CHECK(p == seen[0]);
}

TEST_CASE("malformed params are reported as type errors naming the primitive") {
  CHECK(infer_error("transpose", {f32({2, 2})}, {{"permutation", "not ints"}}) ==
        "transpose: param 'permutation' is not a tuple of ints");
  CHECK(infer_error("scan", {f32({})}, {{"jaxpr", NoneParam{}}}) ==
        "scan: param 'jaxpr' is not a jaxpr");
  CHECK(infer_error("cond", {i32({}), f32({})}, {{"branches", 3}}) ==
        "cond: param 'branches' is not a tuple of jaxprs");
}

TEST_CASE("structural ops keep the text of an extended dtype") {
  // wild-jaxprs/32: slice and squeeze of `key<fry>[...]` arrays.
  ShapedArray key(DType::opaque, {2, 1});
  auto ann = std::make_shared<AvalAnnotations>();
  ann->dtype_text = "key<fry>";
  key.annotations = ann;
  ShapedArray out = infer1("squeeze", {key}, {{"dimensions", ParamValue::ints({1})}});
  CHECK(out.str_short() == "key<fry>[2]");
}

TEST_CASE("a malformed nested jaxpr is a type error, not a crash") {
  auto hollow = std::make_shared<Jaxpr>();
  hollow->invars = {Var(f32({}))};
  hollow->outvars = {Var()};
  CHECK(infer_error("jit", {f32({})}, {{"name", "f"}, {"jaxpr", JaxprRef(hollow)}}) ==
        "jit: the jaxpr has a null variable");
  hollow->outvars = {};
  hollow->invars = {Var()};
  CHECK(infer_error("cond", {i32({}), f32({})}, {{"branches", ParamTuple{{JaxprRef(hollow)}}}}) ==
        "cond: branch 0 has a null variable");
}
