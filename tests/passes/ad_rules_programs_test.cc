// The exact eqn sequences of rules: each expected program is derived by hand from JAX's rule in
// jax/_src/lax/{lax,slicing}.py (the ops its Python evaluates, in evaluation order, with lax's
// and staging's eqn elisions), so a reordering or an extra eqn shows up here even where the
// numbers stay right.
#include "ad_rules_check.h"

using namespace cjax;
using namespace cjax::adtest;

namespace {

const ShapedArray f3(DType::f32, {3});
const ShapedArray i32s(DType::i32, {});

Jaxpr eqn(std::string_view prim, std::vector<ShapedArray> in, Params params = {}) {
  std::vector<Arg> args;
  for (ShapedArray& a : in) args.push_back(Arg{std::move(a)});
  return one_eqn(prim, args, std::move(params));
}

std::string jvp_text(const Jaxpr& f, std::vector<bool> nonzero) {
  return program(jvp_jaxpr(f, nonzero, false).jaxpr);
}

std::string transpose_text(const Jaxpr& f, std::vector<bool> linear) {
  return program(transpose_jaxpr(f, linear));
}

}  // namespace

TEST_CASE("programs: elementwise jvps follow JAX's evaluation order") {
  // _abs_jvp_rule: select(ge(x, _zero(x)), g, neg(g)).
  CHECK(jvp_text(eqn("abs", {f3}), {true}) ==
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = abs a\n"
        "    d:bool[3] = ge a 0.0:f32[]\n"
        "    e:f32[3] = neg b\n"
        "    f:f32[3] = select_n d e b\n"
        "  in (c, f) }");
  // tanh (default accuracy): mul(add(g, mul(g, ans)), sub(_one(x), ans)).
  CHECK(jvp_text(eqn("tanh", {f3}), {true}) ==
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = tanh a\n"
        "    d:f32[3] = mul b c\n"
        "    e:f32[3] = add b d\n"
        "    f:f32[3] = sub 1.0:f32[] c\n"
        "    g:f32[3] = mul e f\n"
        "  in (c, g) }");
  // _integer_pow_jvp: mul(g, mul(_const(x, y), integer_pow(x, y - 1))).
  CHECK(jvp_text(eqn("integer_pow", {f3}, lax_params::integer_pow(3)), {true}) ==
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = integer_pow[y=3] a\n"
        "    d:f32[3] = integer_pow[y=2] a\n"
        "    e:f32[3] = mul 3.0:f32[] d\n"
        "    f:f32[3] = mul b e\n"
        "  in (c, f) }");
  // exp2: mul(log(_const(x, 2)), mul(g, ans)).
  CHECK(jvp_text(eqn("exp2", {f3}), {true}) ==
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = exp2 a\n"
        "    d:f32[] = log 2.0:f32[]\n"
        "    e:f32[3] = mul b c\n"
        "    f:f32[3] = mul d e\n"
        "  in (c, f) }");
  // atanh: mul(reciprocal(add(_one(x), x)), div(g, sub(_one(x), x))).
  CHECK(jvp_text(eqn("atanh", {f3}), {true}) ==
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = atanh a\n"
        "    d:f32[3] = add 1.0:f32[] a\n"
        "    e:f32[3] = integer_pow[y=-1] d\n"
        "    f:f32[3] = sub 1.0:f32[] a\n"
        "    g:f32[3] = div b f\n"
        "    h:f32[3] = mul e g\n"
        "  in (c, h) }");
  // rem: the lhs tangent passes; rhs: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))).
  CHECK(jvp_text(eqn("rem", {f3, f3}), {true, true}) ==
        "{ lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3]. let\n"
        "    e:f32[3] = rem a b\n"
        "    f:f32[3] = neg d\n"
        "    g:f32[3] = div a b\n"
        "    h:f32[3] = sign g\n"
        "    i:f32[3] = div a b\n"
        "    j:f32[3] = abs i\n"
        "    k:f32[3] = floor j\n"
        "    l:f32[3] = mul h k\n"
        "    m:f32[3] = mul f l\n"
        "    n:f32[3] = add_any c m\n"
        "  in (e, n) }");
  // _pow_jvp_lhs (float exponent) then _pow_jvp_rhs, summed.
  CHECK(jvp_text(eqn("pow", {f3, f3}), {true, true}) ==
        "{ lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3]. let\n"
        "    e:f32[3] = pow a b\n"
        "    f:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    g:f32[3] = sub b f\n"
        "    h:f32[3] = pow a g\n"
        "    i:f32[3] = mul b h\n"
        "    j:f32[3] = mul c i\n"
        "    k:bool[3] = eq a 0.0:f32[]\n"
        "    l:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    m:f32[3] = select_n k a l\n"
        "    n:f32[3] = log m\n"
        "    o:f32[3] = mul n e\n"
        "    p:f32[3] = mul d o\n"
        "    q:f32[3] = add_any j p\n"
        "  in (e, q) }");
  // max: mul(g, _balanced_eq(x, ans, y)) for x, then the mirror image for y.
  CHECK(jvp_text(eqn("max", {f3, f3}), {true, false}) ==
        "{ lambda ; a:f32[3] b:f32[3] c:f32[3]. let\n"
        "    d:f32[3] = max a b\n"
        "    e:bool[3] = eq a d\n"
        "    f:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    g:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    h:f32[3] = select_n e g f\n"
        "    i:bool[3] = eq b d\n"
        "    j:f32[3] = broadcast_in_dim 2.0:f32[]\n"
        "    k:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    l:f32[3] = select_n i k j\n"
        "    m:f32[3] = div h l\n"
        "    n:f32[3] = mul c m\n"
        "  in (d, n) }");
}

TEST_CASE("programs: reduce_max's jvp is _reduce_chooser_jvp_rule") {
  Jaxpr f = eqn("reduce_max", {ShapedArray(DType::f32, {2, 3})}, lax_params::reduce({1}));
  CHECK(jvp_text(f, {true}) ==
        "{ lambda ; a:f32[2,3] b:f32[2,3]. let\n"
        "    c:f32[2] = reduce_max[axes=(1,) out_sharding=None] a\n"
        "    d:f32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] c\n"
        "    e:bool[2,3] = eq a d\n"
        "    f:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] e\n"
        "    g:f32[2] = reduce_sum[axes=(1,) out_sharding=None] f\n"
        "    h:f32[2,3] = mul b f\n"
        "    i:f32[2] = reduce_sum[axes=(1,) out_sharding=None] h\n"
        "    j:f32[2] = div i g\n"
        "  in (c, j) }");
}

TEST_CASE("programs: transposes of the structural and slicing primitives") {
  // _broadcast_in_dim_transpose_rule: reduce_sum, then expand_dims of the unit dims.
  CHECK(transpose_text(eqn("broadcast_in_dim", {ShapedArray(DType::f32, {1, 3})},
                           lax_params::broadcast_in_dim({2, 4, 3}, {1, 2})),
                       {true}) ==
        "{ lambda ; a:f32[2,4,3]. let\n"
        "    b:f32[3] = reduce_sum[axes=(0, 1) out_sharding=None] a\n"
        "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "  in (c,) }");
  Params dims = lax_params::reshape({6});
  dims.set("dimensions", ParamValue::ints({1, 0}));
  CHECK(transpose_text(eqn("reshape", {ShapedArray(DType::f32, {2, 3})}, dims), {true}) ==
        "{ lambda ; a:f32[6]. let\n"
        "    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a\n"
        "    c:f32[2,3] = transpose[permutation=(1, 0)] b\n"
        "  in (c,) }");
  // _pad_transpose: unpad, stride over the interior, and the rest of the total for the value;
  // the widths, starts and strides numpy computed (np.negative, np.zeros_like, np.add).
  CHECK(transpose_text(eqn("pad", {f3, ShapedArray(DType::f32, {})}, lax_params::pad({{1, 2, 1}})),
                       {true, true}) ==
        "{ lambda ; a:f32[8]. let\n"
        "    b:f32[5] = pad[padding_config=((np.int64(-1), np.int64(-2), np.int64(0)),)] a\n"
        "      0.0:f32[]\n"
        "    c:f32[3] = slice[\n"
        "      limit_indices=(5,)\n"
        "      start_indices=(np.int64(0),)\n"
        "      strides=(np.int64(2),)\n"
        "    ] b\n"
        "    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "    e:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n"
        "    f:f32[] = sub d e\n"
        "  in (c, f) }");
  // Of a scalar: lax.slice binds the strides it is given, `()` here, not None.
  CHECK(transpose_text(eqn("pad", {ShapedArray(DType::f32, {}), ShapedArray(DType::f32, {})},
                           lax_params::pad({})),
                       {true, false}) ==
        "{ lambda ; a:f32[] b:f32[]. let\n"
        "    c:f32[] = pad[padding_config=()] b 0.0:f32[]\n"
        "    d:f32[] = slice[limit_indices=() start_indices=() strides=()] c\n"
        "  in (d,) }");
  // _slice_transpose: pad with interior padding for the strides.
  CHECK(
      transpose_text(eqn("slice", {ShapedArray(DType::f32, {7})}, lax_params::slice({1}, {7}, {2})),
                     {true}) ==
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[7] = pad[padding_config=((1, 1, 1),)] a 0.0:f32[]\n"
      "  in (b,) }");
  CHECK(transpose_text(eqn("dynamic_slice", {ShapedArray(DType::f32, {5}), i32s},
                           lax_params::dynamic_slice({2})),
                       {true, false}) ==
        "{ lambda ; a:i32[] b:f32[2]. let\n"
        "    c:f32[5] = broadcast_in_dim 0.0:f32[]\n"
        "    d:f32[5] = dynamic_update_slice c b a\n"
        "  in (d,) }");
  Jaxpr dus = eqn("dynamic_update_slice",
                  {ShapedArray(DType::f32, {5}), ShapedArray(DType::f32, {2}), i32s});
  CHECK(jvp_text(dus, {false, true, false}) ==
        "{ lambda ; a:f32[5] b:f32[2] c:i32[] d:f32[2]. let\n"
        "    e:f32[5] = dynamic_update_slice a b c\n"
        "    f:f32[5] = broadcast_in_dim 0.0:f32[]\n"
        "    g:f32[5] = dynamic_update_slice f d c\n"
        "  in (e, g) }");
  CHECK(transpose_text(dus, {true, true, false}) ==
        "{ lambda ; a:i32[] b:f32[5]. let\n"
        "    c:f32[2] = broadcast_in_dim 0.0:f32[]\n"
        "    d:f32[5] = dynamic_update_slice b c a\n"
        "    e:f32[2] = dynamic_slice[slice_sizes=(2,)] b a\n"
        "  in (d, e) }");
  CHECK(transpose_text(eqn("cumsum", {f3}, lax_params::cumulative(0, false)), {true}) ==
        "{ lambda ; a:f32[3]. let b:f32[3] = cumsum[axis=0 reverse=True] a in (b,) }");
  // _select_transpose_rule with an integer predicate: select(eq(which, i), ct, zeros).
  CHECK(transpose_text(eqn("select_n", {ShapedArray(DType::i32, {3}), f3, f3, f3}),
                       {false, true, false, true}) ==
        "{ lambda ; a:i32[3] b:f32[3] c:f32[3]. let\n"
        "    d:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    e:bool[3] = eq a 0:i32[]\n"
        "    f:f32[3] = select_n e d c\n"
        "    g:bool[3] = eq a 2:i32[]\n"
        "    h:f32[3] = select_n g d c\n"
        "  in (f, h) }");
}
