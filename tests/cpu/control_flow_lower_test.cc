// scan, cond and while compiled natively (scf.for, scf.if / scf.index_switch, scf.while) equal
// the interpreter: the control-flow examples forward and backward, and parsed programs with
// reversed, empty and multi-carry scans, data-dependent while loops and clamped switch indices.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <limits>
#include <random>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "examples/registry.h"
#include "ir/parse/parser.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"
#include "tests/passes/nested_calls.h"

namespace cjax {
namespace {

// Compiles `j`, runs it on `in` and compares with the interpreter; returns the compiled outputs.
std::vector<runtime::Buffer> check_matches(const Jaxpr& j, std::span<const runtime::Buffer> in,
                                           const std::string& what,
                                           std::shared_ptr<const lower::Executable>* exe_out = {}) {
  INFO(what);
  auto exe = lower::compile(j, what);
  auto got = exe->run(in);
  auto want = runtime::eval_jaxpr(j, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i);
    test::require_close(got[i], want[i]);
  }
  if (exe_out) *exe_out = exe;
  return got;
}

// How many eqns of each control-flow kind `j` holds, nested bodies included.
struct Counts {
  int scan = 0, cond2 = 0, condn = 0, while_ = 0;
};

void count(const Jaxpr& j, Counts& c) {
  for (const Eqn& e : j.eqns) {
    const std::string& p = e.prim->name;
    if (p == "scan") ++c.scan;
    if (p == "while") ++c.while_;
    if (p == "cond") {
      const ParamValue& b = e.params.at("branches");
      const size_t n = b.is<ParamTuple>() ? b.as<ParamTuple>().items.size() : 0;
      ++(n == 2 ? c.cond2 : c.condn);
    }
    for (const auto& [key, value] : e.params) {
      if (value.is<JaxprRef>() && value.as<JaxprRef>()) count(*value.as<JaxprRef>(), c);
      if (value.is<ParamTuple>())
        for (const ParamValue& item : value.as<ParamTuple>().items)
          if (item.is<JaxprRef>() && item.as<JaxprRef>()) count(*item.as<JaxprRef>(), c);
    }
  }
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// The program's control flow is in the lowered module as scf ops, and none of it is a call of
// the interpreter's kernel.
void check_native(const Jaxpr& j, const lower::Executable& exe, const std::string& what) {
  INFO(what);
  Counts c;
  count(j, c);
  // Every call compiled in place, and the program as one function: a body met at several places
  // (a binomial schedule's ranges) would otherwise hold its loops once for all its calls, and
  // equal loops cut into segments of their own (a long program's) would be one function.
  const std::string mlir = lower::lower_to_text(
      j, lower::Stage::mlir, what,
      {.max_whole_eqns = std::numeric_limits<size_t>::max(), .outline_repeated_calls = false});
  CHECK(occurrences(mlir, "scf.for") >= static_cast<size_t>(c.scan));
  CHECK(occurrences(mlir, "scf.if") >= static_cast<size_t>(c.cond2));
  CHECK(occurrences(mlir, "scf.index_switch") >= static_cast<size_t>(c.condn));
  CHECK(occurrences(mlir, "scf.while") >= static_cast<size_t>(c.while_));
  for (const std::string& call : exe.compile_stats().runtime_calls) {
    INFO(call);
    CHECK(call.find("via the interpreter's kernel") == std::string::npos);
  }
}

void check_text(const std::string& text, double lo = -2.0, double hi = 2.0, unsigned seed = 7) {
  JaxprRef j = parse_jaxpr(text);
  auto in = test::random_inputs(*j, lo, hi, seed);
  std::shared_ptr<const lower::Executable> exe;
  check_matches(*j, in, text, &exe);
  check_native(*j, *exe, text);
}

bool is_control_flow_example(const std::string& name) {
  return name.rfind("scan/", 0) == 0 || name.rfind("cond/", 0) == 0 || name.rfind("loop/", 0) == 0;
}

TEST_CASE("control-flow examples compile to scf loops and branches, forward and backward",
          "[control_flow]") {
  int seen = 0;
  for (const examples::Example& ex : examples::all()) {
    if (!is_control_flow_example(ex.name)) continue;
    ++seen;
    const Jaxpr jaxpr = ex.make_jaxpr();
    const std::vector<runtime::Buffer> inputs = ex.default_inputs();
    std::shared_ptr<const lower::Executable> exe;
    check_matches(jaxpr, inputs, ex.name, &exe);
    check_native(jaxpr, *exe, ex.name);

    VjpResult p = vjp_jaxpr(jaxpr, {true});
    check_matches(p.fwd, inputs, ex.name + " (forward)", &exe);
    check_native(p.fwd, *exe, ex.name + " (forward)");
    auto fwd_out = runtime::eval_jaxpr(p.fwd, inputs);
    std::vector<runtime::Buffer> bwd_in(fwd_out.begin() + 1, fwd_out.end());
    bwd_in.push_back(runtime::Buffer::full(jaxpr.out_avals()[0], 1.0));
    check_matches(p.bwd, bwd_in, ex.name + " (backward)", &exe);
    check_native(p.bwd, *exe, ex.name + " (backward)");
  }
  CHECK(seen >= 6);
}

TEST_CASE("a scan over layers is one scf.for whose dots call BLAS inside the loop",
          "[control_flow]") {
  const Jaxpr j = examples::get("scan/net").make_jaxpr();
  lower::CompileOptions blas;  // its 2x2 products would be loop nests by size
  blas.dot_path = lower::DotPath::blas;
  const std::string mlir = lower::lower_to_text(j, lower::Stage::mlir, "scan/net", blas);
  CHECK(occurrences(mlir, "scf.for") == 1);
  CHECK(occurrences(mlir, "tensor.extract_slice") == 2);  // this layer's weights and bias
  const size_t loop = mlir.find("scf.for"), call = mlir.find("call @cjax_runtime_call");
  REQUIRE(call != std::string::npos);
  CHECK(loop < call);
  // The call's pointer list is allocated once, before the loop, not on every iteration.
  CHECK(mlir.find("memref.alloca") < loop);
  // The dot reads this layer's weights in place in the stacked argument (its address plus the
  // layer's offset), never from a copy of the slice.
  CHECK(mlir.find("to_memref %extracted_slice") == std::string::npos);
  CHECK(mlir.find("memref.extract_aligned_pointer_as_index %arg1 ") != std::string::npos);
  auto exe = lower::compile(j, "scan/net", blas);
  REQUIRE(exe->compile_stats().runtime_calls.size() == 1);
  CHECK(exe->compile_stats().runtime_calls[0].rfind("dot_general via BLAS", 0) == 0);
}

TEST_CASE("scans: reversed, empty, several carries and ys, consts, f64, unroll", "[control_flow]") {
  // Reversed: the carry's update does not commute, and each y reads the carry, so visiting the
  // slices in the wrong order changes every output.
  const std::string reversed =
      "{ lambda ; a:f64[3] b:f64[] c:f64[5,3]. let\n"
      "    d:f64[] e:f64[5,3] = scan[_split_transpose=False jaxpr={ lambda ; f:f64[3] g:f64[] "
      "h:f64[3]. let i:f64[3] = mul f h; j:f64[] = reduce_sum[axes=(0,)] i; k:f64[] = mul g "
      "0.5:f64[]; l:f64[] = add k j; m:f64[3] = mul h g in (l, m) } length=5 linear=(False, "
      "False, False) num_carry=1 num_consts=1 reverse=REVERSE unroll=UNROLL] a b c\n"
      "  in (d, e) }";
  auto with = [&](const std::string& rev, const std::string& unroll) {
    std::string t = reversed;
    t.replace(t.find("REVERSE"), 7, rev);
    t.replace(t.find("UNROLL"), 6, unroll);
    return t;
  };
  for (const char* rev : {"True", "False"})
    for (const char* unroll : {"1", "2"}) check_text(with(rev, unroll));
  // The same program gives different results forward and reversed (the test can fail).
  JaxprRef fwd = parse_jaxpr(with("False", "1"));
  JaxprRef rev = parse_jaxpr(with("True", "1"));
  auto in = test::random_inputs(*fwd, -2, 2, 3);
  CHECK(lower::compile(*fwd)->run(in)[0].to_doubles() !=
        lower::compile(*rev)->run(in)[0].to_doubles());

  // Zero iterations: the carries come back as given, the ys are empty.
  check_text(
      "{ lambda ; a:f32[2] b:f32[0,3]. let\n"
      "    c:f32[2] d:f32[0,2] = scan[_split_transpose=False jaxpr={ lambda ; e:f32[2] f:f32[3]. "
      "let g:f32[] = reduce_sum[axes=(0,)] f; h:f32[2] = add e g in (h, h) } length=0 "
      "linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1] a b\n"
      "  in (c, d) }");

  // Three carries of three dtypes (a flattened pytree), two xs, two ys, a scalar x slice, no
  // const.
  check_text(
      "{ lambda ; a:f32[2] b:i32[] c:f64[2,2] d:f32[4,2] e:f32[4]. let\n"
      "    f:f32[2] g:i32[] h:f64[2,2] i:f32[4,2] j:i32[4] = scan[_split_transpose=False "
      "jaxpr={ lambda ; k:f32[2] l:i32[] m:f64[2,2] n:f32[2] o:f32[]. let p:f32[2] = mul k o; "
      "q:f32[2] = add p n; r:i32[] = add l 1:i32[]; s:f64[2,2] = mul m 1.5:f64[]; t:f32[2] = sin "
      "q in (q, r, s, t, r) } length=4 linear=(False, False, False, False, False) num_carry=3 "
      "num_consts=0 reverse=False unroll=1] a b c d e\n"
      "  in (f, g, h, i, j) }");

  // No xs, only a length (fori_loop's form), and a scan nested in a scan's body.
  check_text(
      "{ lambda ; a:f32[3] b:f32[2,3]. let\n"
      "    c:f32[3] = scan[_split_transpose=False jaxpr={ lambda ; d:f32[2,3] e:f32[3]. let\n"
      "        f:f32[3] = scan[_split_transpose=False jaxpr={ lambda ; g:f32[3] h:f32[3]. let "
      "i:f32[3] = mul g h; j:f32[3] = tanh i in (j,) } length=2 linear=(False, False) "
      "num_carry=1 num_consts=0 reverse=True unroll=1] e d\n"
      "      in (f,) } length=3 linear=(False, False) num_carry=1 num_consts=1 reverse=False "
      "unroll=1] b a\n"
      "  in (c,) }");
}

TEST_CASE("a traced reverse scan with a pytree carry, and its gradient", "[control_flow]") {
  // The carry is a pair (h, s); ys are stacked from the step's h.
  auto f = [](const Array& h0, const Array& xs) {
    using Carry = std::pair<Array, Array>;
    auto step = [](const Carry& c, const Array& x) {
      Array h = np::tanh(c.first * x + c.second);
      return std::pair<Carry, Array>{Carry{h, c.second + 0.5}, h * 2.0};
    };
    auto [carry, ys] = scan(step, Carry{h0, h0}, xs, std::nullopt, /*reverse=*/true);
    return np::sum(carry.first * carry.second) + np::sum(ys);
  };
  const Jaxpr j = make_jaxpr(f)(ShapeDtype{DType::f32, {3}}, ShapeDtype{DType::f32, {5, 3}});
  const Eqn* loop = nullptr;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == "scan") loop = &e;
  REQUIRE(loop);
  CHECK(loop->params.get_int("num_carry") == 2);
  CHECK(loop->params.get_bool("reverse"));
  auto in = test::random_inputs(j, -1, 1, 11);
  std::shared_ptr<const lower::Executable> exe;
  check_matches(j, in, "pytree carry", &exe);
  check_native(j, *exe, "pytree carry");
  VjpResult p = vjp_jaxpr(j, {true, true});
  check_matches(p.fwd, in, "pytree carry (forward)", &exe);
  check_native(p.fwd, *exe, "pytree carry (forward)");
  auto fwd_out = runtime::eval_jaxpr(p.fwd, in);
  std::vector<runtime::Buffer> bwd_in(fwd_out.begin() + 1, fwd_out.end());
  bwd_in.push_back(runtime::Buffer::full(j.out_avals()[0], 1.0));
  check_matches(p.bwd, bwd_in, "pytree carry (backward)", &exe);
  check_native(p.bwd, *exe, "pytree carry (backward)");
}

runtime::Buffer i32_scalar(int64_t v) {
  return runtime::Buffer::full(ShapedArray{DType::i32, {}}, static_cast<double>(v));
}

TEST_CASE("cond: three branches on a clamped index, two on a bool or an integer",
          "[control_flow]") {
  const std::string three =
      "{ lambda ; a:i32[] b:f32[3] c:f32[]. let\n"
      "    d:f32[3] = cond[branches=(\n"
      "      { lambda ; e:f32[3] f:f32[]. let g:f32[3] = add e f in (g,) }\n"
      "      { lambda ; h:f32[3] i:f32[]. let j:f32[3] = mul h i in (j,) }\n"
      "      { lambda ; k:f32[3] l:f32[]. let m:f32[3] = sin k in (m,) }\n"
      "    )] a b c\n"
      "  in (d,) }";
  JaxprRef j = parse_jaxpr(three);
  auto exe = lower::compile(*j, "three branches");
  check_native(*j, *exe, "three branches");
  CHECK(occurrences(lower::lower_to_text(*j, lower::Stage::mlir), "scf.index_switch") == 1);
  std::mt19937 rng(5);
  runtime::Buffer x = test::random_buffer(ShapedArray{DType::f32, {3}}, rng, -2, 2);
  runtime::Buffer y = runtime::Buffer::full(ShapedArray{DType::f32, {}}, 3.0);
  std::vector<std::vector<double>> seen;
  for (int64_t index : {-7, 0, 1, 2, 3, 100}) {  // out of range clamps to the first/last branch
    INFO("index " << index);
    std::vector<runtime::Buffer> in{i32_scalar(index), x, y};
    auto got = check_matches(*j, in, "three branches");
    seen.push_back(got[0].to_doubles());
  }
  CHECK(seen[0] == seen[1]);
  CHECK(seen[3] == seen[4]);
  CHECK(seen[3] == seen[5]);
  CHECK(seen[1] != seen[2]);
  CHECK(seen[2] != seen[3]);

  // A bool predicate and an integer index with two branches: scf.if. The branches return an
  // operand unchanged and a literal.
  for (const char* index_type : {"bool", "i32"}) {
    const std::string two = fmt::format(
        "{{ lambda ; a:{}[] b:f32[2,2] c:i32[]. let\n"
        "    d:f32[2,2] e:i32[] = cond[branches=(\n"
        "      {{ lambda ; f:f32[2,2] g:i32[]. let  in (f, 7:i32[]) }}\n"
        "      {{ lambda ; h:f32[2,2] i:i32[]. let j:f32[2,2] = neg h; k:i32[] = mul i 2:i32[] in "
        "(j, k) }}\n"
        "    )] a b c\n"
        "  in (d, e) }}",
        index_type);
    for (unsigned seed : {1u, 2u, 3u, 4u}) check_text(two, -2, 2, seed);
    JaxprRef t = parse_jaxpr(two);
    CHECK(occurrences(lower::lower_to_text(*t, lower::Stage::mlir), "scf.if") == 1);
  }
}

TEST_CASE("control flow nests: a cond in a scan's body, a scan in a while's body",
          "[control_flow]") {
  // Each step picks by the sign of x[t] whether the carry grows or shrinks.
  check_text(
      "{ lambda ; a:f32[2] b:f32[6]. let\n"
      "    c:f32[2] d:f32[6,2] = scan[_split_transpose=False jaxpr={ lambda ; e:f32[2] f:f32[]. "
      "let g:bool[] = gt f 0.0:f32[]; h:i32[] = convert_element_type[new_dtype=int32 "
      "weak_type=False] g; i:f32[2] = cond[branches=(\n"
      "      { lambda ; j:f32[2] k:f32[]. let l:f32[2] = mul j 0.5:f32[] in (l,) }\n"
      "      { lambda ; m:f32[2] n:f32[]. let o:f32[2] = add m n in (o,) }\n"
      "    )] h e f in (i, i) } length=6 linear=(False, False) num_carry=1 num_consts=0 "
      "reverse=False unroll=1] a b\n"
      "  in (c, d) }");
  check_text(
      "{ lambda ; a:f32[3] b:f32[4,3]. let\n"
      "    c:i32[] d:f32[3] = while[body_jaxpr={ lambda ; e:f32[4,3] f:i32[] g:f32[3]. let\n"
      "        h:f32[3] = scan[_split_transpose=False jaxpr={ lambda ; i:f32[3] j:f32[3]. let "
      "k:f32[3] = add i j; l:f32[3] = sin k in (l,) } length=4 linear=(False, False) "
      "num_carry=1 num_consts=0 reverse=False unroll=1] g e\n"
      "        m:i32[] = add f 1:i32[]\n"
      "      in (m, h) } body_nconsts=1 cond_jaxpr={ lambda ; n:i32[] o:f32[3]. let p:bool[] = lt "
      "n 3:i32[] in (p,) } cond_nconsts=0] b 0:i32[] a\n"
      "  in (c, d) }");
}

TEST_CASE("while: a data-dependent trip count, zero trips, consts, a dot in the body",
          "[control_flow]") {
  // Doubles d until it reaches the limit a, counting the steps; e accumulates b each step.
  const std::string doubling =
      "{ lambda ; a:f32[] b:f32[4]. let\n"
      "    c:i32[] d:f32[] e:f32[4] = while[body_jaxpr={ lambda ; f:f32[4] g:i32[] h:f32[] "
      "i:f32[4]. let j:i32[] = add g 1:i32[]; k:f32[] = mul h 2.0:f32[]; l:f32[4] = add i f in "
      "(j, k, l) } body_nconsts=1 cond_jaxpr={ lambda ; m:f32[] n:i32[] o:f32[] p:f32[4]. let "
      "q:bool[] = lt o m in (q,) } cond_nconsts=1] a b 0:i32[] 1.0:f32[] b\n"
      "  in (c, d, e) }";
  JaxprRef j = parse_jaxpr(doubling);
  std::shared_ptr<const lower::Executable> exe;
  std::vector<int64_t> trips;
  for (double limit : {0.5, 3.0, 1000.0, 1e6}) {
    INFO("limit " << limit);
    std::vector<runtime::Buffer> in{runtime::Buffer::full(ShapedArray{DType::f32, {}}, limit),
                                    runtime::Buffer::full(ShapedArray{DType::f32, {4}}, 0.25)};
    auto got = check_matches(*j, in, "doubling", &exe);
    trips.push_back(static_cast<int64_t>(got[0].to_doubles()[0]));
  }
  check_native(*j, *exe, "doubling");
  CHECK(trips == std::vector<int64_t>{0, 2, 10, 20});

  // A matrix-vector product in the body (a BLAS call inside scf.while) until the norm is small.
  check_text(
      "{ lambda ; a:f32[3,3] b:f32[3]. let\n"
      "    c:i32[] d:f32[3] = while[body_jaxpr={ lambda ; e:f32[3,3] f:i32[] g:f32[3]. let "
      "h:f32[3] = dot_general[dimension_numbers=(([1], [0]), ([], [])) "
      "preferred_element_type=float32] e g; i:f32[3] = mul h 0.5:f32[]; j:i32[] = add f 1:i32[] "
      "in (j, i) } body_nconsts=1 cond_jaxpr={ lambda ; k:i32[] l:f32[3]. let m:f32[3] = mul l "
      "l; n:f32[] = reduce_sum[axes=(0,)] m; o:bool[] = gt n 0.001:f32[]; p:bool[] = lt k "
      "100:i32[]; q:bool[] = and o p in (q,) } cond_nconsts=0] a 0:i32[] b\n"
      "  in (c, d) }",
      -0.9, 0.9);
}

TEST_CASE("a scan whose body the back end cannot compile runs the interpreter's kernel whole",
          "[control_flow]") {
  // f16 has no type in the back end: the scan is one kernel call, and still right.
  const char* text =
      "{ lambda ; a:f32[3] b:f32[4,3]. let\n"
      "    c:f32[3] = scan[_split_transpose=False jaxpr={ lambda ; d:f32[3] e:f32[3]. let "
      "f:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] e; g:f32[3] = "
      "convert_element_type[new_dtype=float32 weak_type=False] f; h:f32[3] = add d g in (h,) } "
      "length=4 linear=(False, False) num_carry=1 num_consts=0 reverse=False unroll=1] a b\n"
      "  in (c,) }";
  JaxprRef j = parse_jaxpr(text);
  std::shared_ptr<const lower::Executable> exe;
  check_matches(*j, test::random_inputs(*j, -2, 2, 9), "f16 body", &exe);
  REQUIRE(exe->compile_stats().runtime_calls.size() == 1);
  CHECK(exe->compile_stats().runtime_calls[0] == "scan via the interpreter's kernel");
}

TEST_CASE("a loop nest deeper than 12 runs the interpreter's kernel whole, and matches it",
          "[control_flow]") {
  // MLIR's bufferization takes time exponential in the depth of nested scf loops (78 s at 26
  // levels): 14 nested scans of 2 steps are one kernel call.
  auto f = [](const Array& x) { return np::sum(testing::nested_scans(x, 14, 2)); };
  const Jaxpr j = make_jaxpr(f)(ShapeDtype{DType::f32, {3}});
  std::shared_ptr<const lower::Executable> exe;
  check_matches(j, test::random_inputs(j, -2, 2, 5), "14 nested scans", &exe);
  REQUIRE(exe->compile_stats().runtime_calls.size() == 1);
  CHECK(exe->compile_stats().runtime_calls[0] == "scan via the interpreter's kernel");

  // 12 levels still compile natively: no kernel call.
  auto g = [](const Array& x) { return np::sum(testing::nested_scans(x, 12, 1)); };
  const Jaxpr k = make_jaxpr(g)(ShapeDtype{DType::f32, {3}});
  check_matches(k, test::random_inputs(k, -2, 2, 6), "12 nested scans", &exe);
  CHECK(exe->compile_stats().runtime_calls.empty());

  // 40 levels of 2 steps compile at once (running them would take 2^40 steps).
  auto deep = [](const Array& x) { return np::sum(testing::nested_scans(x, 40, 2)); };
  CHECK(lower::compile(make_jaxpr(deep)(ShapeDtype{DType::f32, {3}}), "40 nested scans")
            ->compile_stats()
            .runtime_calls.size() == 1);
}

}  // namespace
}  // namespace cjax
