// Which params each primitive shows, in which order (the printer lays them out).
#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

using Keys = std::vector<std::string>;

TEST_CASE("transcendental ops hide accuracy when None") {
  for (const char* name : {"sin", "cos", "tan", "tanh", "exp", "exp2", "log", "log1p", "expm1",
                           "sqrt", "rsqrt", "cbrt", "logistic"}) {
    INFO(name);
    CHECK(printed_keys(name, {{"accuracy", NoneParam{}}}).empty());
    CHECK(printed_keys(name, {{"accuracy", OpaqueParam{"Tolerance(atol=0.1)"}}}) ==
          Keys{"accuracy"});
    CHECK(printed_keys(name, {}).empty());
  }
}

TEST_CASE("mul hides out_dtype when None") {
  CHECK(printed_keys("mul", {{"out_dtype", NoneParam{}}}).empty());
  CHECK(printed_keys("mul", {{"out_dtype", DType::f32}}) == Keys{"out_dtype"});
  CHECK(printed_keys("add", {}).empty());
}

TEST_CASE("broadcast_in_dim hides shape, sharding and empty broadcast_dimensions") {
  Params p{{"shape", ParamValue::ints({3})},
           {"broadcast_dimensions", ParamValue::ints({})},
           {"sharding", NoneParam{}}};
  CHECK(printed_keys("broadcast_in_dim", p).empty());  // `broadcast_in_dim 1.0:f32[]`
  p.set("broadcast_dimensions", ParamValue::ints({0, 1, 2}));
  CHECK(printed_keys("broadcast_in_dim", p) == Keys{"broadcast_dimensions"});
  p.set("sharding", OpaqueParam{"P('x', None)"});
  CHECK(printed_keys("broadcast_in_dim", p) == Keys{"broadcast_dimensions"});
}

TEST_CASE("convert_element_type always hides sharding") {
  Params p{{"sharding", NoneParam{}}, {"weak_type", false}, {"new_dtype", DType::i32}};
  CHECK(printed_keys("convert_element_type", p) == Keys{"new_dtype", "weak_type"});
  p.set("sharding", OpaqueParam{"P()"});
  CHECK(printed_keys("convert_element_type", p) == Keys{"new_dtype", "weak_type"});
}

TEST_CASE("dot_general drops None params and always hides out_sharding") {
  Params p{{"dimension_numbers", DotDimensionNumbers{{1}, {0}, {}, {}}.to_param()},
           {"precision", NoneParam{}},
           {"preferred_element_type", DType::f32},
           {"out_sharding", NoneParam{}}};
  CHECK(printed_keys("dot_general", p) == Keys{"dimension_numbers", "preferred_element_type"});
  p.set("precision", "BF16_BF16_F32");
  p.set("out_sharding", OpaqueParam{"P('x', unreduced=('y',))"});
  CHECK(printed_keys("dot_general", p) ==
        Keys{"dimension_numbers", "precision", "preferred_element_type"});
  // The printed form of the dimension numbers has lists inside: (([1], [0]), ([], [])).
  const ParamValue* dn = p.find("dimension_numbers");
  REQUIRE(dn->is<ParamTuple>());
  CHECK(dn->as<ParamTuple>().items[0].as<ParamTuple>().items[0].is<ParamList>());
}

TEST_CASE("primitives without a rule print every param, sorted") {
  CHECK(printed_keys("reduce_sum",
                     {{"out_sharding", NoneParam{}}, {"axes", ParamValue::ints({0})}}) ==
        Keys{"axes", "out_sharding"});
  CHECK(printed_keys("iota", {{"shape", ParamValue::ints({2})},
                              {"sharding", NoneParam{}},
                              {"dtype", DType::i32},
                              {"dimension", 0}}) ==
        Keys{"dimension", "dtype", "shape", "sharding"});
  CHECK(printed_keys("reshape", {{"new_sizes", ParamValue::ints({2})},
                                 {"sharding", NoneParam{}},
                                 {"dimensions", NoneParam{}}}) ==
        Keys{"dimensions", "new_sizes", "sharding"});
  CHECK(printed_keys("slice", {{"strides", NoneParam{}},
                               {"start_indices", ParamValue::ints({0})},
                               {"limit_indices", ParamValue::ints({1})}}) ==
        Keys{"limit_indices", "start_indices", "strides"});
  CHECK(printed_keys("remat2", {{"prevent_cse", true},
                                {"policy", NoneParam{}},
                                {"jaxpr", unary_jaxpr("sin", f32({}))},
                                {"differentiated", false}}) ==
        Keys{"differentiated", "jaxpr", "policy", "prevent_cse"});
  CHECK(printed_keys("scan", {{"unroll", 1},
                              {"reverse", false},
                              {"num_consts", 0},
                              {"num_carry", 1},
                              {"length", 4},
                              {"jaxpr", unary_jaxpr("sin", f32({}))}}) ==
        Keys{"jaxpr", "length", "num_carry", "num_consts", "reverse", "unroll"});
  CHECK(printed_keys("while", {{"cond_nconsts", 0},
                               {"body_nconsts", 2},
                               {"cond_jaxpr", NoneParam{}},
                               {"body_jaxpr", NoneParam{}}}) ==
        Keys{"body_jaxpr", "body_nconsts", "cond_jaxpr", "cond_nconsts"});
  CHECK(printed_keys("argmax", {{"index_dtype", DType::i32}, {"axes", ParamValue::ints({1})}}) ==
        Keys{"axes", "index_dtype"});
  CHECK(printed_keys("integer_pow", {{"y", 2}}) == Keys{"y"});
}

TEST_CASE("jit prints name first and hides defaulted params") {
  JaxprRef body = unary_jaxpr("sin", f32({1}));
  Params p{{"jaxpr", body}, {"name", "inner"}};
  CHECK(printed_keys("jit", p) == Keys{"name", "jaxpr"});
  // Everything current JAX binds, at its default: still `jit[name=inner jaxpr=...]`.
  p.set("donated_invars", ParamValue::bools({false}));
  p.set("inline", true);
  p.set("keep_unused", false);
  p.set("in_shardings", ParamTuple{{OpaqueParam{"UnspecifiedValue"}}});
  p.set("out_shardings", ParamTuple{{OpaqueParam{"UnspecifiedValue"}}});
  p.set("in_layouts", ParamTuple{{NoneParam{}}});
  p.set("out_layouts", ParamTuple{{NoneParam{}}});
  p.set("ctx_mesh", OpaqueParam{"AbstractMesh((), axis_types=())"});
  p.set("compiler_options_kvs", ParamTuple{});
  CHECK(printed_keys("jit", p) == Keys{"name", "jaxpr"});
  // Non-defaults show, sorted after name (wild-jaxprs/28 shows ctx_mesh).
  p.set("donated_invars", ParamValue::bools({true}));
  p.set("ctx_mesh", OpaqueParam{"Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit))"});
  p.set("keep_unused", true);
  CHECK(printed_keys("jit", p) ==
        Keys{"name", "ctx_mesh", "donated_invars", "jaxpr", "keep_unused"});
}

TEST_CASE("custom_jvp_call and custom_vjp_call print name first") {
  JaxprRef call = unary_jaxpr("sin", f32({1}));
  // wild-jaxprs/25
  CHECK(printed_keys("custom_jvp_call", {{"call_jaxpr", call},
                                         {"jvp", "f_jvp"},
                                         {"num_consts", 0},
                                         {"symbolic_zeros", false},
                                         {"name", "f"}}) ==
        Keys{"name", "call_jaxpr", "jvp", "symbolic_zeros"});
  CHECK(printed_keys("custom_jvp_call", {{"call_jaxpr", call}, {"num_consts", 2}}) ==
        Keys{"call_jaxpr", "num_consts"});
  // wild-jaxprs/26
  CHECK(printed_keys("custom_vjp_call", {{"call_jaxpr", call},
                                         {"fwd", "f_fwd"},
                                         {"bwd", "f_bwd"},
                                         {"num_consts", 0},
                                         {"out_trees", OpaqueParam{"..."}},
                                         {"symbolic_zeros", false},
                                         {"name", "f"}}) ==
        Keys{"name", "bwd", "call_jaxpr", "fwd", "symbolic_zeros"});
}

TEST_CASE("an opaque primitive prints its params in the order they were read") {
  Params p{{"mode", OpaqueParam{"GatherScatterMode.FILL_OR_DROP"}},
           {"fill_value", OpaqueParam{"nan"}},
           {"dimension_numbers", OpaqueParam{"GatherDimensionNumbers(...)"}}};
  CHECK(printed_keys(opaque_primitive("gather"), p) ==
        Keys{"mode", "fill_value", "dimension_numbers"});
}
