// Params read from older JAX text, brought to the current schema.
#include "rules_test_util.h"

using namespace cjax;
using namespace cjax::test;

using Keys = std::vector<std::string>;

namespace {
Params canonical(std::string_view prim, Params p) {
  get_primitive(prim).canonicalize_params(p);
  return p;
}
}  // namespace

TEST_CASE("reductions gain out_sharding=None where JAX binds it") {
  for (const char* name : {"reduce_sum", "reduce_max", "reduce_min"}) {
    INFO(name);
    // wild-jaxprs/35 (jax 0.4): reduce_sum[axes=(0,)]
    Params p = canonical(name, {{"axes", ParamValue::ints({0})}});
    REQUIRE(p.has("out_sharding"));
    CHECK(p.find("out_sharding")->is_none());
    CHECK(printed_keys(name, p) == Keys{"axes", "out_sharding"});
    // Already current: unchanged.
    Params q = canonical(name, {{"axes", ParamValue::ints({0})}, {"out_sharding", "P('x')"}});
    CHECK(q.get_string("out_sharding") == "P('x')");
  }
  CHECK(keys_of(canonical("reduce_prod", {{"axes", ParamValue::ints({0})}})) == Keys{"axes"});
  CHECK(keys_of(canonical("argmax", {{"axes", ParamValue::ints({0})},
                                     {"index_dtype", DType::i32}})) == Keys{"axes", "index_dtype"});
}

TEST_CASE("sharding=None is added where current JAX binds it") {
  // wild-jaxprs/35: broadcast_in_dim[broadcast_dimensions=() shape=(1,)]
  Params b = canonical("broadcast_in_dim", {{"broadcast_dimensions", ParamValue::ints({})},
                                            {"shape", ParamValue::ints({1})}});
  CHECK(keys_of(b) == Keys{"broadcast_dimensions", "shape", "sharding"});
  CHECK(printed_keys("broadcast_in_dim", b).empty());
  Params c = canonical("convert_element_type", {{"new_dtype", DType::f32}, {"weak_type", false}});
  CHECK(keys_of(c) == Keys{"new_dtype", "weak_type", "sharding"});
  CHECK(printed_keys("convert_element_type", c) == Keys{"new_dtype", "weak_type"});
  // wild-jaxprs/30: reshape[dimensions=None new_sizes=(1, 10)] prints `sharding=None` today.
  Params r =
      canonical("reshape", {{"dimensions", NoneParam{}}, {"new_sizes", ParamValue::ints({1, 10})}});
  CHECK(printed_keys("reshape", r) == Keys{"dimensions", "new_sizes", "sharding"});
  // wild-jaxprs/30: iota[dimension=1 dtype=int32 shape=(1, 2)]
  Params i = canonical(
      "iota", {{"dimension", 1}, {"dtype", DType::i32}, {"shape", ParamValue::ints({1, 2})}});
  CHECK(printed_keys("iota", i) == Keys{"dimension", "dtype", "shape", "sharding"});
  // An explicit sharding (wild-jaxprs/28) is kept.
  Params s = canonical("broadcast_in_dim", {{"broadcast_dimensions", ParamValue::ints({})},
                                            {"shape", ParamValue::ints({})},
                                            {"sharding", OpaqueParam{"P()"}}});
  CHECK(s.find("sharding")->is<OpaqueParam>());
}

TEST_CASE("transcendental ops and mul gain nothing") {
  // wild-jaxprs/29 (jax 0.6): cos[accuracy=None] prints `cos` today; older `cos` stays `cos`.
  CHECK(canonical("cos", {}).empty());
  CHECK(keys_of(canonical("cos", {{"accuracy", NoneParam{}}})) == Keys{"accuracy"});
  CHECK(canonical("mul", {}).empty());
}

TEST_CASE("cond drops its retired linear param, scan keeps jax 0.9's") {
  JaxprRef body = unary_jaxpr("sin", f32({}));
  // jax 0.4.30 docs: cond[branches=(...) linear=(False,)]
  Params c = canonical(
      "cond", {{"branches", ParamTuple{{body, body}}}, {"linear", ParamValue::bools({false})}});
  CHECK(keys_of(c) == Keys{"branches"});
  // wild-jaxprs/04 (jax 0.9.2): scan with _split_transpose and linear
  Params s = canonical("scan", {{"_split_transpose", false},
                                {"jaxpr", body},
                                {"length", 4},
                                {"linear", ParamValue::bools({false})},
                                {"num_carry", 1},
                                {"num_consts", 0},
                                {"reverse", false},
                                {"unroll", 1}});
  CHECK(printed_keys("scan", s) == Keys{"_split_transpose", "jaxpr", "length", "linear",
                                        "num_carry", "num_consts", "reverse", "unroll"});
  CHECK(infer_str("scan", {f32({})}, s) == std::vector<std::string>{"f32[]"});
}

TEST_CASE("pjit and xla_call are read as jit") {
  CHECK(find_primitive("pjit") == &get_primitive("jit"));
  CHECK(find_primitive("xla_call") == &get_primitive("jit"));
  JaxprRef body = unary_jaxpr("sin", f32({}));

  // wild-jaxprs/38 (jax 0.2.26): xla_call[call_jaxpr={...} name=inner]
  Params x = canonical("xla_call", {{"call_jaxpr", body},
                                    {"name", "inner"},
                                    {"device", NoneParam{}},
                                    {"backend", NoneParam{}},
                                    {"donated_invars", ParamValue::bools({false})},
                                    {"inline", false},
                                    {"keep_unused", false}});
  CHECK(keys_of(x) == Keys{"name", "jaxpr"});
  CHECK(printed_keys("jit", x) == Keys{"name", "jaxpr"});

  // wild-jaxprs/33 (jax 0.4.5): pjit with retired params and explicit shardings.
  Params p = canonical(
      "pjit", {{"donated_invars", ParamValue::bools({false, false})},
               {"in_positional_semantics", OpaqueParam{"(<_PositionalSemantics.GLOBAL: 1>,)"}},
               {"in_shardings", ParamTuple{{OpaqueParam{"GSPMDSharding({replicated})"}}}},
               {"jaxpr", body},
               {"name", "<unnamed function>"},
               {"out_positional_semantics", OpaqueParam{"_PositionalSemantics.GLOBAL"}},
               {"out_shardings", ParamTuple{{OpaqueParam{"UnspecifiedValue"}}}},
               {"resource_env", OpaqueParam{"ResourceEnv(...)"}}});
  CHECK(keys_of(p) == Keys{"in_shardings", "jaxpr", "name"});
  CHECK(printed_keys("jit", p) == Keys{"name", "in_shardings", "jaxpr"});

  // wild-jaxprs/28 (jax 0.6.2): the mesh stays.
  Params m = canonical(
      "pjit", {{"name", "f"},
               {"ctx_mesh", OpaqueParam{"Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit))"}},
               {"jaxpr", body}});
  CHECK(printed_keys("jit", m) == Keys{"name", "ctx_mesh", "jaxpr"});
  // An inline=True survives (it is hidden in print, but means something).
  CHECK(keys_of(canonical("jit", {{"name", "f"}, {"jaxpr", body}, {"inline", true}})) ==
        Keys{"name", "jaxpr", "inline"});
}

TEST_CASE("custom_jvp_call and custom_vjp_call rename their rule params") {
  JaxprRef call = unary_jaxpr("sin", f32({}));
  // wild-jaxprs/30 (jax 0.4.26): custom_jvp_call[call_jaxpr jvp_jaxpr_thunk num_consts
  // symbolic_zeros]
  Params j = canonical(
      "custom_jvp_call",
      {{"call_jaxpr", call},
       {"jvp_jaxpr_thunk", OpaqueParam{"<function _memoize.<locals>.memoized at 0x7ac6181d0af0>"}},
       {"num_consts", 0},
       {"symbolic_zeros", false}});
  CHECK(printed_keys("custom_jvp_call", j) == Keys{"call_jaxpr", "jvp", "symbolic_zeros"});
  Params v = canonical("custom_vjp_call", {{"fun_jaxpr", call},
                                           {"fwd_jaxpr_thunk", "f_fwd"},
                                           {"bwd", "f_bwd"},
                                           {"out_trees", OpaqueParam{"<fn>"}},
                                           {"num_consts", 0},
                                           {"symbolic_zeros", false}});
  CHECK(printed_keys("custom_vjp_call", v) == Keys{"bwd", "call_jaxpr", "fwd", "symbolic_zeros"});
}

TEST_CASE("dot_general: lists inside dimension_numbers, and every param bound") {
  // jax < 0.4.14 text: dot_general[dimension_numbers=(((1,), (0,)), ((), ())) precision=None]
  ParamValue tuples = ParamTuple{{ParamTuple{{ParamValue::ints({1}), ParamValue::ints({0})}},
                                  ParamTuple{{ParamValue::ints({}), ParamValue::ints({})}}}};
  Params d = canonical("dot_general", {{"dimension_numbers", tuples}, {"precision", NoneParam{}}});
  CHECK(keys_of(d) ==
        Keys{"dimension_numbers", "precision", "preferred_element_type", "out_sharding"});
  const auto& outer = d.find("dimension_numbers")->as<ParamTuple>().items;
  CHECK(outer[0].as<ParamTuple>().items[0].is<ParamList>());
  CHECK(printed_keys("dot_general", d) == Keys{"dimension_numbers"});
  CHECK(infer1("dot_general", {f32({5, 10}), f32({10})}, d).str_short() == "f32[5]");
}

TEST_CASE("every built-in primitive has a print rule and a canonicalizer") {
  for (std::string_view name : builtin_primitive_names()) {
    INFO(name);
    const Primitive& p = get_primitive(name);
    CHECK(p.print_params);
    CHECK(p.canonicalize_params);
    CHECK(p.shape_rule);
    CHECK_FALSE(p.opaque);
  }
}
