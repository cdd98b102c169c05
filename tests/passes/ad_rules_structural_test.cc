// jvp / vjp / transpose of the structural, slicing, select and identity-like primitives.
#include "ad_rules_check.h"

using namespace cjax;
using namespace cjax::adtest;

namespace {

// jvp/vjp checks plus the linear checks with every array input linear.
void check_all(const Jaxpr& f, const std::vector<Arg>& args, const std::vector<bool>& linear,
               Rng& rng) {
  check_jvp_vjp(f, args, rng);
  check_linear(f, args, linear, rng);
}

}  // namespace

TEST_CASE("ad rules: broadcast_in_dim, including size-1 operand dims") {
  Rng rng(301);
  struct Case {
    Shape in, out;
    std::vector<int64_t> dims;
  };
  for (const Case& c :
       {Case{{}, {2, 3}, {}}, Case{{3}, {2, 3}, {1}}, Case{{1, 3}, {4, 2, 3}, {1, 2}},
        Case{{2, 1}, {2, 4}, {0, 1}}, Case{{1}, {1}, {0}}, Case{{3, 1}, {3, 2, 5}, {0, 1}}}) {
    std::vector<Arg> args{f64(c.in)};
    Jaxpr f = one_eqn("broadcast_in_dim", args, lax_params::broadcast_in_dim(c.out, c.dims));
    check_all(f, args, {true}, rng);
  }
}

TEST_CASE("ad rules: reshape (also with dimensions), transpose, squeeze, expand_dims") {
  Rng rng(302);
  std::vector<Arg> a23{f64({2, 3})};
  check_all(one_eqn("reshape", a23, lax_params::reshape({3, 2})), a23, {true}, rng);
  Params with_dims = lax_params::reshape({6});
  with_dims.set("dimensions", ParamValue::ints({1, 0}));
  check_all(one_eqn("reshape", a23, with_dims), a23, {true}, rng);
  std::vector<Arg> s{f64({})};
  check_all(one_eqn("reshape", s, lax_params::reshape({1, 1})), s, {true}, rng);
  std::vector<Arg> a234{f64({2, 3, 4})};
  check_all(one_eqn("transpose", a234, lax_params::transpose({2, 0, 1})), a234, {true}, rng);
  std::vector<Arg> a131{f64({1, 3, 1})};
  check_all(one_eqn("squeeze", a131, lax_params::squeeze({0, 2})), a131, {true}, rng);
  check_all(one_eqn("expand_dims", a23, {{"dimensions", ParamValue::ints({0, 3})}}), a23, {true},
            rng);
}

TEST_CASE("ad rules: concatenate, with non-linear operands") {
  Rng rng(303);
  std::vector<Arg> args{f64({2, 3}), f64({2, 1}), f64({2, 2})};
  Jaxpr f = one_eqn("concatenate", args, lax_params::concatenate(1));
  check_all(f, args, {true, true, true}, rng);
  // One split, as jax 0.11.2 transposes concatenate (tests/golden/jax_0_11_2/new_prims.md,
  // "concatenate grad"); a non-linear operand's piece is dropped.
  CHECK(program(transpose_jaxpr(f, {true, false, true})) ==
        "{ lambda ; a:f64[2,1] b:f64[2,6]. let\n"
        "    c:f64[2,3] _:f64[2,1] d:f64[2,2] = split[axis=1 sizes=(3, 1, 2)] b\n"
        "  in (c, d) }");
}

TEST_CASE("ad rules: pad with low/high/interior and negative padding") {
  Rng rng(304);
  for (auto config : std::vector<std::vector<std::vector<int64_t>>>{
           {{1, 2, 0}}, {{0, 0, 2}}, {{2, -1, 1}, {-1, 1, 0}}, {{0, 0, 0}, {1, 1, 1}}}) {
    Shape shape(config.size(), 3);
    std::vector<Arg> args{f64(shape), f64({})};
    Jaxpr f = one_eqn("pad", args, lax_params::pad(config));
    check_all(f, args, {true, true}, rng);
    std::vector<Arg> operand{args[0]};
    Jaxpr zero_padded = make_jaxpr(operand, [&](JaxprBuilder& b, const std::vector<Atom>& in) {
      return std::vector<Atom>{
          b.emit1("pad", {in[0], Literal::of(0.0, DType::f64)}, lax_params::pad(config))};
    });
    check_all(zero_padded, operand, {true}, rng);
  }
}

TEST_CASE("ad rules: convert_element_type") {
  Rng rng(305);
  std::vector<Arg> args{f64({4})};
  Jaxpr round_trip = make_jaxpr(args, [](JaxprBuilder& b, const std::vector<Atom>& in) {
    Atom f = b.emit1("convert_element_type", {in[0]},
                     lax_params::convert_element_type(DType::f32, false));
    return std::vector<Atom>{
        b.emit1("convert_element_type", {f}, lax_params::convert_element_type(DType::f64, false))};
  });
  check_jvp_vjp(round_trip, args, rng, 2, 1e-4, 1e-2, 1e-6);
  check_linear(round_trip, args, {true}, rng, 2, 1e-6);
  // To an integer: no tangent.
  Jaxpr to_int =
      one_eqn("convert_element_type", args, lax_params::convert_element_type(DType::i32, false));
  CHECK(jvp_jaxpr(to_int, {true}, false).out_nonzero == std::vector<bool>{false});
  // A weak-type change keeps its eqn on the tangent; a same-type one is forwarded.
  std::vector<Arg> w{f64({2})};
  Jaxpr weak =
      one_eqn("convert_element_type", w, lax_params::convert_element_type(DType::f64, true));
  CHECK(program(jvp_jaxpr(weak, {true}, false).jaxpr) ==
        "{ lambda ; a:f64[2] b:f64[2]. let\n"
        "    c:f64[2] = convert_element_type[new_dtype=float64 weak_type=True] a\n"
        "    d:f64[2] = convert_element_type[new_dtype=float64 weak_type=True] b\n"
        "  in (c, d) }");
}

TEST_CASE("ad rules: select_n with bool and integer predicates, scalar predicates") {
  Rng rng(306);
  for (int s = 0; s < 3; ++s) {
    Shape shape = random_shape(rng);
    Shape pshape = s == 0 ? Shape{} : shape;
    std::vector<Arg> args{pred(pshape), f64(shape), f64(shape)};
    Jaxpr f = one_eqn("select_n", args);
    check_all(f, args, {false, true, true}, rng);
    std::vector<Arg> three{i32(pshape, 0, 2), f64(shape), f64(shape), f64(shape)};
    Jaxpr g = one_eqn("select_n", three);
    check_all(g, three, {false, true, true, true}, rng);
  }
  // Only one case has a tangent: the other gets zeros.
  std::vector<Arg> args{pred({3}), f64({3}), f64({3})};
  Jaxpr f = one_eqn("select_n", args);
  CHECK(program(jvp_jaxpr(f, {false, false, true}, false).jaxpr) ==
        "{ lambda ; a:bool[3] b:f64[3] c:f64[3] d:f64[3]. let\n"
        "    e:f64[3] = select_n a b c\n"
        "    f:f64[3] = broadcast_in_dim 0.0:f64[]\n"
        "    g:f64[3] = select_n a f d\n"
        "  in (e, g) }");
  CHECK(program(transpose_jaxpr(f, {false, true, true})) ==
        "{ lambda ; a:bool[3] b:f64[3]. let\n"
        "    c:f64[3] = broadcast_in_dim 0.0:f64[]\n"
        "    d:f64[3] = select_n a b c\n"
        "    e:f64[3] = select_n a c b\n"
        "  in (d, e) }");
}

TEST_CASE("ad rules: slice, with and without strides") {
  Rng rng(307);
  std::vector<Arg> args{f64({5, 6})};
  check_all(one_eqn("slice", args, lax_params::slice({1, 0}, {4, 6})), args, {true}, rng);
  check_all(one_eqn("slice", args, lax_params::slice({0, 1}, {5, 6}, {2, 3})), args, {true}, rng);
  check_all(one_eqn("slice", args, lax_params::slice({1, 2}, {1, 5}, {1, 2})), args, {true}, rng);
}

TEST_CASE("ad rules: dynamic_slice and dynamic_update_slice") {
  Rng rng(308);
  std::vector<Arg> ds{f64({5, 4}), i32({}, 0, 5), i32({}, 0, 3)};
  check_all(one_eqn("dynamic_slice", ds, lax_params::dynamic_slice({2, 3})), ds,
            {true, false, false}, rng);
  std::vector<Arg> dus{f64({5, 4}), f64({2, 3}), i32({}, 0, 5), i32({}, 0, 3)};
  Jaxpr f = one_eqn("dynamic_update_slice", dus);
  check_all(f, dus, {true, true, false, false}, rng);
}

TEST_CASE("ad rules: copy, name, optimization_barrier, device_put, reduce_precision") {
  Rng rng(309);
  std::vector<Arg> one{f64({2, 3})};
  check_all(one_eqn("copy", one), one, {true}, rng);
  check_all(one_eqn("reduce_precision", one,
                    {{"exponent_bits", int64_t{11}}, {"mantissa_bits", int64_t{52}}}),
            one, {true}, rng);
  Jaxpr named = one_eqn("name", one, lax_params::name("h"));
  check_jvp_vjp(named, one, rng);
  // The primal keeps its name; the tangent passes through unnamed.
  CHECK(program(jvp_jaxpr(named, {true}, false).jaxpr) ==
        "{ lambda ; a:f64[2,3] b:f64[2,3]. let c:f64[2,3] = name[name=h] a in (c, b) }");

  std::vector<Arg> two{f64({2}), f64({3})};
  Jaxpr barrier = one_eqn("optimization_barrier", two);
  check_all(barrier, two, {true, true}, rng);
  CHECK(program(jvp_jaxpr(barrier, {false, true}, false).jaxpr) ==
        "{ lambda ; a:f64[2] b:f64[3] c:f64[3]. let\n"
        "    d:f64[2] e:f64[3] = optimization_barrier a b\n"
        "    f:f64[3] = optimization_barrier c\n"
        "  in (d, e, f) }");

  auto tuple2 = [](ParamValue v) { return ParamValue(ParamTuple{{v, v}}); };
  Params dp{{"devices", tuple2(NoneParam{})},
            {"srcs", tuple2(OpaqueParam{"MemorySpace.Host"})},
            {"copy_semantics", tuple2(OpaqueParam{"ArrayCopySemantics.REUSE_INPUT"})}};
  Jaxpr put = one_eqn("device_put", two, dp);
  check_all(put, two, {true, true}, rng);
  std::string t = program(transpose_jaxpr(put, {true, true}));
  INFO(t);
  CHECK(t.find("copy_semantics=(ArrayCopySemantics.ALWAYS_COPY, ArrayCopySemantics.ALWAYS_COPY)") !=
        std::string::npos);
  CHECK(t.find("devices=(MemorySpace.Host, MemorySpace.Host)") != std::string::npos);
  CHECK(t.find("srcs=(None, None)") != std::string::npos);
}
