// What the parser builds: binders, scopes, literals, avals with annotations, params, shared
// jaxprs, era renames.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ir/primitive.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "parse_test_util.h"

using namespace cjax;

namespace {

const Literal& literal_input(const Jaxpr& j, size_t eqn, size_t input) {
  const Atom& a = j.eqns.at(eqn).inputs.at(input);
  REQUIRE(a.is_literal());
  return a.literal();
}

}  // namespace

TEST_CASE("parse: a one-line jaxpr", "[parse]") {
  JaxprRef j =
      parse_jaxpr("{ lambda ; a:f32[5]. let b:f32[5] = tanh a; c:f32[5] = exp b in (c,) }");
  REQUIRE(j->invars.size() == 1);
  CHECK(j->invars[0].aval().str_short() == "f32[5]");
  CHECK(j->invars[0].hint() == "a");
  REQUIRE(j->eqns.size() == 2);
  CHECK(j->eqns[0].prim->name == "tanh");
  CHECK_FALSE(j->eqns[0].prim->opaque);
  CHECK(j->eqns[1].inputs[0].var() == j->eqns[0].outputs[0]);
  REQUIRE(j->outvars.size() == 1);
  CHECK(j->outvars[0].var() == j->eqns[1].outputs[0]);
  CHECK(to_string(*j) == "{ lambda ; a:f32[5]. let b:f32[5] = tanh a; c:f32[5] = exp b in (c,) }");
  verify(*j);
}

TEST_CASE("parse: constvars, drop vars, unused-binder suffix, empty bodies", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda a:i32[1]; b:f32[] c:f32[3]. let\n"
      "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n"
      "    d:f32[] = cond[\n"
      "      branches=(\n"
      "        { lambda ; e_:f32[] f:f32[]. let  in (f,) }\n"
      "        { lambda ; g:f32[] h_:f32[]. let  in (g,) }\n"
      "      )\n"
      "    ] 1 b b\n"
      "  in (d, a) }");
  REQUIRE(j->constvars.size() == 1);
  CHECK(j->constvars[0].aval().str_short() == "i32[1]");
  CHECK(j->invars.size() == 2);
  CHECK(j->eqns[0].outputs[0].is_drop());
  const auto& branches = j->eqns[1].params.at("branches").as<ParamTuple>().items;
  REQUIRE(branches.size() == 2);
  const Jaxpr& b0 = *branches[0].as<JaxprRef>();
  CHECK(b0.eqns.empty());
  CHECK(b0.invars[0].hint() == "e_");  // as written; the current format prints it as `e`
  CHECK(b0.outvars[0].var() == b0.invars[1]);
  // The untyped branch index is an i32.
  CHECK(literal_input(*j, 1, 0).aval.str_short() == "i32[]");
  CHECK(j->outvars[1].var() == j->constvars[0]);
  verify(*j);
}

TEST_CASE("parse: a nested jaxpr has its own scope", "[parse]") {
  // As JAX prints jit: the inner jaxpr re-uses the outer names a, b and c.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = sub a 2.0:f32[]\n"
      "    c:f32[1] = jit[\n"
      "      name=inner\n"
      "      jaxpr={ lambda ; a:f32[] b:f32[]. let\n"
      "          d:f32[1] = broadcast_in_dim 1.0:f32[]\n"
      "          c:f32[1] = mul a d\n"
      "        in (c,) }\n"
      "    ] a b\n"
      "  in (c,) }");
  const Jaxpr& inner = *j->eqns[1].params.get_jaxpr("jaxpr");
  CHECK_FALSE(inner.invars[0] == j->invars[0]);
  CHECK(inner.invars[0].hint() == "a");
  CHECK(j->eqns[1].inputs[0].var() == j->invars[0]);
  // broadcast_in_dim's shape comes from its binder (the current printer hides it).
  CHECK(inner.eqns[0].params.get_ints("shape") == std::vector<int64_t>{1});
  CHECK(inner.eqns[0].params.get_ints("broadcast_dimensions").empty());
  verify(*j);
}

TEST_CASE("parse: a jit body's argument named `_` after its caller's operand reads back",
          "[parse]") {
  // Found by fuzzing: the outer jit's output is unused, so its body's result prints as `_`; that
  // value is also an operand of an inner jit, whose argument takes the name `_` too.
  const std::string printed =
      "{ lambda ; a:i32[]. let\n"
      "    _:i32[] = jit[\n"
      "      name=take\n"
      "      jaxpr={ lambda ; a:i32[]. let\n"
      "          _:i32[] = add a 4:i32[]\n"
      "          b:i32[] = jit[\n"
      "            name=where\n"
      "            jaxpr={ lambda ; a:i32[] _:i32[]. let b:i32[] = add a _ in (b,) }\n"
      "          ] a _\n"
      "          c:i32[] = mul b _\n"
      "        in (_,) }\n"
      "    ] a\n"
      "  in (a,) }";
  JaxprRef j = parse_jaxpr(printed);
  verify(*j);
  const Jaxpr& take = *j->eqns[0].params.get_jaxpr("jaxpr");
  const Jaxpr& where = *take.eqns[1].params.get_jaxpr("jaxpr");
  CHECK(where.eqns[0].inputs[1].var() == where.invars[1]);  // `_` is the binder
  CHECK(take.eqns[1].inputs[1].var() == take.eqns[0].outputs[0]);
  CHECK(take.outvars[0].var() == take.eqns[0].outputs[0]);
  CHECK(to_string(*j) == printed);
}

TEST_CASE("parse: typed and elided literals", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[] b:i32[] c:bool[] d:u32[]. let\n"
      "    e:f32[] = add a 1.0:f32[]\n"
      "    f:i32[] = mul 2:i32[] b\n"
      "    g:bool[] = and c True:bool[]\n"
      "    h:f32[] = max a nan:f32[]\n"
      "    i:f32[] = max a -inf:f32[]\n"
      "    j:f32[] = add a 9.999999974752427e-07:f32[]\n"
      "    k:u32[] = add d 4294967295:u32[]\n"
      "  in (e, [...]:f32[3], 2:i32[]) }");
  CHECK(literal_input(*j, 0, 1).as_double() == 1.0);
  CHECK(literal_input(*j, 0, 1).aval.str_short() == "f32[]");
  CHECK(literal_input(*j, 1, 0).as_int() == 2);
  CHECK(std::get<bool>(literal_input(*j, 2, 1).value));
  CHECK(std::isnan(literal_input(*j, 3, 1).as_double()));
  CHECK(literal_input(*j, 4, 1).as_double() == -INFINITY);
  CHECK(literal_input(*j, 5, 1).value_str() == "9.999999974752427e-07");
  CHECK(literal_input(*j, 6, 1).value_str() == "4294967295");
  REQUIRE(j->outvars.size() == 3);
  REQUIRE(j->outvars[1].is_literal());
  CHECK(j->outvars[1].literal().elided);
  CHECK(j->outvars[1].literal().aval.str_short() == "f32[3]");
  CHECK(j->outvars[2].literal().as_int() == 2);
  CHECK_FALSE(literal_input(*j, 0, 1).aval.weak_type);
}

TEST_CASE("parse: untyped literals of older eras take their dtype from the eqn", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:bf16[4] b:i32[] c:f32[16] d:bool[4]. let\n"
      "    e:bf16[4] = mul 2 a\n"    // the other operand's dtype
      "    f:bf16[] = neg 1\n"       // no typed operand: the output's dtype
      "    g:i32[] = clamp 0 b 2\n"  // all typed operands agree
      "    h:f32[] = div 1.0 128.0\n"
      "    i:bool[4] = eq d True\n"
      "    j:bool[] = lt 1 2\n"  // an int cannot be a bool: i32
      "    _:i32[] _:i32[] k:f32[16] = while[\n"
      "      body_jaxpr={ lambda ; l:f32[16] m:i32[] n:i32[] o:f32[16]. let\n"
      "          p:i32[] = add m 1\n"
      "          q:f32[16] = add o l\n"
      "        in (p, n, q) }\n"
      "      body_nconsts=1\n"
      "      cond_jaxpr={ lambda ; r:i32[] s:i32[] t:f32[16]. let\n"
      "          u:bool[] = lt r s\n"
      "        in (u,) }\n"
      "      cond_nconsts=0\n"
      "    ] c 0 b c\n"  // the callee's binder: i32, though most are f32
      "  in (k, 3.0) }");
  CHECK(literal_input(*j, 0, 0).aval.str_short() == "bf16[]");
  CHECK(literal_input(*j, 0, 0).as_double() == 2.0);
  CHECK(literal_input(*j, 0, 0).aval.weak_type);
  CHECK(literal_input(*j, 1, 0).aval.str_short() == "bf16[]");
  CHECK(literal_input(*j, 2, 0).aval.str_short() == "i32[]");
  CHECK(literal_input(*j, 3, 0).aval.str_short() == "f32[]");
  CHECK(literal_input(*j, 4, 1).aval.str_short() == "bool[]");
  CHECK(literal_input(*j, 5, 0).aval.str_short() == "i32[]");
  CHECK(literal_input(*j, 6, 1).aval.str_short() == "i32[]");
  CHECK(j->outvars[1].literal().aval.str_short() == "f32[]");
  verify(*j);
  CHECK(to_string(*j).find(" = mul 2.0:bf16[] a\n") != std::string::npos);
}

TEST_CASE("parse: avals keep the annotations cjax does not model", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f64[8@x,2@y] b:f64[2@y,8] c:bf16[4,512;x:8] d:u32[2] e:f32<host>[8]\n"
      "    f:f32[4@(x,y)]. let\n"
      "    g:f64[8@x,8]{U:y} = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      preferred_element_type=float64\n"
      "    ] a b\n"
      "    h:key<fry>[] = random_wrap[impl=fry] d\n"
      "  in (g, c, h, e, f) }");
  CHECK(j->invars[0].aval().str_short() == "f64[8@x,2@y]");
  CHECK(j->invars[0].aval().shape == Shape{8, 2});
  CHECK(j->invars[2].aval().str_short() == "bf16[4,512;x:8]");
  CHECK(j->invars[2].aval().shape == Shape{4, 512});
  CHECK(j->invars[4].aval().str_short() == "f32<host>[8]");
  CHECK(j->invars[4].aval().dtype == DType::f32);
  CHECK(j->invars[5].aval().str_short() == "f32[4@(x,y)]");
  const ShapedArray& g = j->eqns[0].outputs[0].aval();
  CHECK(g.str_short() == "f64[8@x,8]{U:y}");
  CHECK(g.annotations->suffix == "{U:y}");
  // JAX's threefry keys are a dtype of cjax's (cjax/random.h).
  const ShapedArray& h = j->eqns[1].outputs[0].aval();
  CHECK(h.dtype == DType::key_fry);
  CHECK(h.str_short() == "key<fry>[]");
  CHECK_FALSE(j->eqns[1].prim->opaque);
  CHECK(j->invars[1].aval().annotations->dim_suffix == std::vector<std::string>{"@y", ""});
  CHECK_FALSE(j->invars[3].aval().annotations);
}

TEST_CASE("parse: param values", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[4,8] b:i32[2]. let\n"
      "    c:f32[8] = custom_kernel[\n"
      "      dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(0,), "
      "start_index_map=(0,))\n"
      "      fill_value=nan\n"
      "      indices_are_sorted=False\n"
      "      mode=GatherScatterMode.FILL_OR_DROP\n"
      "      slice_sizes=(1, 8)\n"
      "      thunk=<function _memoize.<locals>.memoized at 0x7ac6181d0af0>\n"
      "      mesh=Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit))\n"
      "      spec=P('x', None))\n"
      "      axes=('rows',)\n"
      "      in_zeros=[False, True]\n"
      "      count=-2147483648\n"
      "      eps=1e-05\n"
      "      name=transpose(f)\n"
      "      kind=<lambda>\n"
      "      nothing=None\n"
      "      index_dtype=int32\n"
      "      precision=BF16_BF16_F32\n"
      "      low=-inf\n"
      "    ] a b\n"
      "  in (c,) }");
  const Params& p = j->eqns[0].params;
  CHECK(j->eqns[0].prim->opaque);
  CHECK(
      p.at("dimension_numbers").as<OpaqueParam>().text ==
      "GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(0,), start_index_map=(0,))");
  CHECK(std::isnan(p.get_float("fill_value")));
  CHECK(p.get_bool("indices_are_sorted") == false);
  CHECK(p.at("mode").as<OpaqueParam>().text == "GatherScatterMode.FILL_OR_DROP");
  CHECK(p.get_ints("slice_sizes") == std::vector<int64_t>{1, 8});
  CHECK(p.at("thunk").as<OpaqueParam>().text ==
        "<function _memoize.<locals>.memoized at 0x7ac6181d0af0>");
  CHECK(p.at("mesh").as<OpaqueParam>().text ==
        "Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit))");
  CHECK(p.at("spec").as<OpaqueParam>().text == "P('x', None))");
  const auto& axes = p.at("axes").as<ParamTuple>().items;
  REQUIRE(axes.size() == 1);
  CHECK(axes[0].as<std::string>() == "rows");
  const auto& zeros = p.at("in_zeros").as<ParamList>().items;
  REQUIRE(zeros.size() == 2);
  CHECK(zeros[1].as<bool>());
  CHECK(p.get_int("count") == -2147483648LL);
  CHECK(p.get_float("eps") == 1e-05);
  CHECK(p.get_string("name") == "transpose(f)");
  CHECK(p.get_string("kind") == "<lambda>");
  CHECK(p.at("nothing").is_none());
  CHECK(p.get_dtype("index_dtype") == DType::i32);
  CHECK(p.get_string("precision") == "BF16_BF16_F32");
  CHECK(p.get_float("low") == -INFINITY);
  // An opaque primitive keeps its params in read order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : p) keys.push_back(k);
  CHECK(keys.front() == "dimension_numbers");
  CHECK(keys.back() == "low");
}

TEST_CASE("parse: shared jaxprs are pointer-shared, in any order", "[parse]") {
  // `outer` refers to `inner`, defined after it, as JAX prints nested shared jaxprs.
  JaxprRef j = parse_jaxpr(
      "let outer = { lambda ; a:f32[1]. let\n"
      "    b:f32[1] = jit[name=inner jaxpr=inner] a\n"
      "    c:f32[1] = jit[name=inner jaxpr=inner] b\n"
      "  in (c,) } in\n"
      "let inner = { lambda ; d:f32[1]. let e:f32[1] = sin d in (e,) } in\n"
      "let unnamed function = { lambda ; f:f32[1]. let  in (f,) } in\n"
      "{ lambda ; g:f32[1]. let\n"
      "    h:f32[1] = jit[name=outer jaxpr=outer] g\n"
      "    i:f32[1] = jit[name=outer jaxpr=outer] h\n"
      "    j:f32[1] = custom_thing[jaxpr=unnamed function name=<unnamed function>] i\n"
      "  in (j,) }");
  const JaxprRef& outer1 = j->eqns[0].params.get_jaxpr("jaxpr");
  CHECK(outer1 == j->eqns[1].params.get_jaxpr("jaxpr"));
  CHECK(j->eqns[0].params.get_string("name") == "outer");
  const JaxprRef& inner1 = outer1->eqns[0].params.get_jaxpr("jaxpr");
  CHECK(inner1 == outer1->eqns[1].params.get_jaxpr("jaxpr"));
  CHECK(inner1->eqns[0].prim->name == "sin");
  const JaxprRef& unnamed = j->eqns[2].params.get_jaxpr("jaxpr");
  CHECK(unnamed->eqns.empty());
  CHECK(j->eqns[2].params.get_string("name") == "<unnamed function>");
  verify(*j);
}

TEST_CASE("parse: pjit and xla_call become jit", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = pjit[name=f jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }] a\n"
      "    e:f32[] = xla_call[\n"
      "      call_jaxpr={ lambda ; f:f32[]. let g:f32[] = cos f in (g,) }\n"
      "      name=g\n"
      "    ] b\n"
      "  in (e,) }");
  CHECK(j->eqns[0].prim->name == "jit");
  CHECK(j->eqns[1].prim->name == "jit");
  CHECK_FALSE(j->eqns[1].params.has("call_jaxpr"));
  CHECK(j->eqns[1].params.get_jaxpr("jaxpr")->eqns[0].prim->name == "cos");
  verify(*j);
}

TEST_CASE("parse: variables named like keywords and literals", "[parse]") {
  // Large JAX jaxprs really name variables `in` (file 31), and in principle `nan` and `inf`.
  JaxprRef j = parse_jaxpr(
      "{ lambda ; in:f32[3] nan:f32[3]. let\n"
      "    inf:f32[3] = add in nan\n"
      "    b:f32[3] = mul inf nan:f32[]\n"
      "    c:f32[3] = sub b in\n"
      "  in (c, in) }");
  CHECK(j->eqns[0].inputs[0].var() == j->invars[0]);
  CHECK(j->eqns[0].inputs[1].var() == j->invars[1]);
  CHECK(j->eqns[1].inputs[0].var() == j->eqns[0].outputs[0]);
  // A variable `nan` is in scope, but `nan:f32[]` is a typed literal.
  CHECK(j->eqns[1].inputs[1].is_literal());
  CHECK(j->eqns[2].inputs[1].var() == j->invars[0]);
  CHECK(j->outvars[1].var() == j->invars[0]);
  // A literal `nan:f32[]` ending an eqn, then the next eqn on the next line.
  JaxprRef k = parse_jaxpr(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = max a nan:f32[]\n"
      "    c:f32[3] d:f32[3] = custom_pair a\n"
      "    e:f32[3] = max c -inf:f32[]\n"
      "    f:f32[3] = custom_select e True:bool[]\n"
      "    g:f32[3] = neg f\n"
      "  in (g, d) }");
  REQUIRE(k->eqns.size() == 5);
  CHECK(k->eqns[0].inputs.size() == 2);
  CHECK(k->eqns[3].inputs.size() == 2);
}

TEST_CASE("parse: non-finite literals read back wherever the printer puts them", "[parse]") {
  // On one line, `add a nan:f32[]; c:f32[] = ...` once read `nan:f32[]` as the next eqn's binder.
  for (const char* t : {"f16", "bf16", "f32", "f64"}) {
    for (const char* v : {"nan", "inf", "-inf"}) {
      std::string lit = fmt::format("{}:{}[]", v, t);
      const std::vector<std::pair<std::string, size_t>> texts = {
          // (text, literals in it)
          {fmt::format("{{ lambda ; a:{0}[]. let b:{0}[] = add a {1}; c:{0}[] = mul b b in (c,) }}",
                       t, lit),
           1},
          {fmt::format(
               "{{ lambda ; a:{0}[]. let b:{0}[] = add {1} {1}; c:{0}[] = mul b a in (c,) }}", t,
               lit),
           2},
          {fmt::format("{{ lambda ; a:{0}[]. let b:{0}[] = add a {1} in (b,) }}", t, lit), 1},
          {fmt::format("{{ lambda ; a:{0}[]. let b:{0}[] = add a {1}; debug_callback[callback=f] b "
                       "in (b, {1}) }}",
                       t, lit),
           2},
          {fmt::format("{{ lambda ; a:{0}[]. let  in ({1},) }}", t, lit), 1},
      };
      for (const auto& [text, literals] : texts) {
        INFO(text);
        JaxprRef j = parse_jaxpr(text);
        std::vector<Literal> found;
        for (const Eqn& e : j->eqns)
          for (const Atom& a : e.inputs)
            if (a.is_literal()) found.push_back(a.literal());
        for (const Atom& a : j->outvars)
          if (a.is_literal()) found.push_back(a.literal());
        REQUIRE(found.size() == literals);
        for (const Literal& l : found) {
          CHECK(short_name(l.aval.dtype) == t);
          double x = l.as_double();
          if (std::string_view(v) == "nan")
            CHECK(std::isnan(x));
          else
            CHECK(x == (v[0] == '-' ? -HUGE_VAL : HUGE_VAL));
        }
        std::string printed = to_string(*j);
        CHECK(to_string(*parse_jaxpr(printed)) == printed);
        if (printed.find('\n') == std::string::npos) CHECK(printed == text);
      }
    }
  }
}

TEST_CASE("parse: operands continue on the next line", "[parse]") {
  JaxprRef j = parse_jaxpr(
      "{ lambda ; a:f32[128,2] b:f32[2,10]. let\n"
      "    c:f32[128,10] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a\n"
      "      b\n"
      "    d:i32[1,2] = iota[dimension=1 dtype=int32 shape=(1, 2)] \n"
      "  in (c, d) }");
  REQUIRE(j->eqns.size() == 2);
  CHECK(j->eqns[0].inputs.size() == 2);
  CHECK(j->eqns[1].inputs.empty());
  verify(*j);
}

TEST_CASE("parse: outputs named `_` can be read", "[parse]") {
  // Since jax 0.10.2 a jit's inner jaxpr takes the outer names of its results, so when the outer
  // results are unused (`_`), the inner ones are named `_` too, and read as `_`.
  const std::string text =
      "{ lambda ; a:f32[]. let\n"
      "    _:f32[] _:i32[] = jit[\n"
      "      name=f\n"
      "      jaxpr={ lambda ; a:f32[]. let\n"
      "          _:f32[] = sin a\n"
      "          _:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
      "        in (_, _) }\n"
      "    ] a\n"
      "  in (a,) }";
  JaxprRef j = parse_jaxpr(text);
  CHECK(j->eqns[0].outputs[0].is_drop());
  const Jaxpr& inner = *j->eqns[0].params.get_jaxpr("jaxpr");
  REQUIRE(inner.outvars.size() == 2);
  CHECK(inner.outvars[0].var() == inner.eqns[0].outputs[0]);
  CHECK(inner.outvars[1].var() == inner.eqns[1].outputs[0]);
  CHECK_FALSE(inner.eqns[0].outputs[0].is_drop());
  verify(*j);
  CHECK(to_string(*j) == text);
  // An eqn operand `_` is the latest output named `_`.
  JaxprRef k = parse_jaxpr("{ lambda ; a:f32[]. let _:f32[] = sin a; c:f32[] = cos _ in (c,) }");
  CHECK(k->eqns[1].inputs[0].var() == k->eqns[0].outputs[0]);
}
