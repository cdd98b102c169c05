// The error catalogue (docs/errors.md): for every class of bad input, the exception the C++ API
// throws with its message, and what the CLI prints (one line, `cjax: <where>: <message>`) and
// the exit code it returns (0 ok, 1 bad input, 2 usage, 3 internal).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cjax/api.h"
#include "io/npy.h"
#include "ir/json/json.h"
#include "ir/parse/parser.h"
#include "passes/jvp.h"
#include "passes/policies.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/cli/run_cli.h"

using cli_test::run_cli;
using namespace cjax;
namespace np = cjax::numpy;

namespace {

// What a call throws: the exception's what(), and whether it had type E.
template <class E, class F>
std::string thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The CLI's error output is exactly one line starting `cjax: `.
void check_one_line(const cli_test::Result& r) {
  INFO(r.err);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("cjax: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  std::string path = std::string(CJAX_BINARY_DIR) + "/errors_test_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

const char* const kSumOfMyOp =
    "{ lambda ; a:f32[3]. let\n"
    "    b:f32[3] = my_op[k=1] a\n"
    "    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
    "  in (c,) }";

}  // namespace

TEST_CASE("errors: malformed jaxpr text gives line:column") {
  std::string text = "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n  in (b, }";
  CHECK(thrown<ParseError>([&] { parse_jaxpr(text); }) ==
        "3:10: expected a variable or a literal, got '}'");
  try {
    parse_jaxpr(text);
    FAIL("no ParseError");
  } catch (const ParseError& p) {
    CHECK(p.line == 3);
    CHECK(p.column == 10);
    CHECK(p.message == "expected a variable or a literal, got '}'");
  }
  auto r = run_cli("jaxpr -", text);
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: <stdin>: 3:10: expected a variable or a literal, got '}'\n");
  check_one_line(r);
}

TEST_CASE("errors: ill-typed jaxpr text names the eqn's op and position") {
  std::string text = "{ lambda ; a:f32[3] b:i32[3]. let c:f32[3] = add a b in (c,) }";
  CHECK(thrown<ParseError>([&] { parse_jaxpr(text); }) ==
        "1:35: add: dtype mismatch f32[3] and i32[3]");
  auto r = run_cli("jaxpr -", text);
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: <stdin>: 1:35: add: dtype mismatch f32[3] and i32[3]\n");
  auto r2 = run_cli("jaxpr -", "{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }");
  CHECK(r2.code == 1);
  CHECK(r2.err ==
        "cjax: <stdin>: 1:26: sin: output type f32[4] does not match the rule's f32[3]\n");
}

TEST_CASE("errors: a shape mismatch while tracing names the op, the shapes and the caller") {
  auto add = [](const Array& a, const Array& b) { return np::add(a, b); };
  std::string msg = thrown<TypeError>([&] { make_jaxpr(add)(np::zeros({3}), np::zeros({4})); });
  INFO(msg);
  CHECK(has(msg, "tests/errors/catalogue_test.cc:"));  // the caller's file:line:col
  CHECK(has(msg, "add: incompatible shapes f32[3] and f32[4]"));
  auto dot = [](const Array& a, const Array& b) { return np::dot(a, b); };
  msg = thrown<TypeError>([&] { make_jaxpr(dot)(np::zeros({3, 2}), np::zeros({4})); });
  CHECK(has(msg, "catalogue_test.cc:"));
  CHECK(has(msg,
            "dot_general: contracting dimensions have different sizes (2,) and (4,) "
            "(got f32[3,2], f32[4])"));
  // Eagerly too.
  msg = thrown<TypeError>([] { np::multiply(np::zeros({2, 3}), np::zeros({3, 2})); });
  CHECK(has(msg, "catalogue_test.cc:"));
  CHECK(has(msg, "mul: incompatible shapes f32[2,3] and f32[3,2]"));
}

TEST_CASE("errors: a dtype mismatch while tracing names the op and both types") {
  auto add = [](const Array& a, const Array& b) { return lax::add(a, b); };
  std::string msg =
      thrown<TypeError>([&] { make_jaxpr(add)(np::zeros({3}), np::zeros({3}, DType::i32)); });
  CHECK(has(msg, "catalogue_test.cc:"));
  CHECK(has(msg, "add: dtype mismatch f32[3] and i32[3]"));
}

TEST_CASE("errors: an unknown primitive in a pass names the primitive and the pass") {
  JaxprRef j = parse_jaxpr(kSumOfMyOp);  // read as an opaque primitive
  CHECK(thrown<UnsupportedError>([&] { jvp_jaxpr(*j, {true}, true); }) ==
        "jvp: no differentiation rule for 'my_op' (from unknown)");
  CHECK(thrown<UnsupportedError>([&] { vjp_jaxpr(*j); }) ==
        "jvp: no differentiation rule for 'my_op' (from unknown)");
  std::vector<runtime::Buffer> in{runtime::Buffer::zeros(ShapedArray(DType::f32, {3}))};
  CHECK(thrown<UnsupportedError>([&] { runtime::eval_jaxpr(*j, in); }) ==
        "interpreter: no kernel for primitive 'my_op'");
  for (const char* sub : {"grad -", "residuals -", "fwd-bwd -"}) {
    auto r = run_cli(sub, kSumOfMyOp);
    INFO(sub);
    CHECK(r.code == 1);
    CHECK(r.err == "cjax: <stdin>: jvp: no differentiation rule for 'my_op' (from unknown)\n");
  }
  // Not differentiated: the back end (or the interpreter) is the first to meet it.
  auto r = run_cli("run -", "{ lambda ; a:i32[3]. let b:i32[3] = my_op[k=1] a in (b,) }");
  CHECK(r.code == 1);
  CHECK(has(r.err, "cjax: <stdin>: "));
  CHECK((has(r.err, "'my_op'") || has(r.err, " my_op: ")));
  check_one_line(r);
}

TEST_CASE("errors: a non-differentiable op or value") {
  // A known primitive without a differentiation rule.
  std::string text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = pmax[axes=('i',) axis_index_groups=None] a\n"
      "    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
      "  in (c,) }";
  CHECK(thrown<UnsupportedError>([&] { vjp_jaxpr(*parse_jaxpr(text)); }) ==
        "jvp: no differentiation rule for 'pmax' (from unknown)");
  auto r = run_cli("grad -", text);
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: <stdin>: jvp: no differentiation rule for 'pmax' (from unknown)\n");
  // grad of a function whose output is not a float scalar: JAX's TypeError.
  const std::string int_output =
      "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
      "got int32. For differentiation of functions with integer outputs, use vjp directly.";
  auto to_int = [](const Array& a) { return np::sum(a).astype(DType::i32); };
  CHECK(thrown<TypeError>([&] { grad(to_int)(np::zeros({3})); }) == int_output);
  r = run_cli("grad -",
              "{ lambda ; a:i32[3]. let b:i32[] = reduce_sum[axes=(0,) out_sharding=None] a in "
              "(b,) }");
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: <stdin>: " + int_output + "\n");
  // grad with respect to an integer argument: JAX's TypeError, unless allow_int.
  const std::string int_input =
      "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
      "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use vjp "
      "or set allow_int to True.";
  auto sum = [](const Array& a) { return np::sum(a.astype(DType::f32)); };
  CHECK(thrown<TypeError>([&] { grad(sum)(np::zeros({3}, DType::i32)); }) == int_input);
  CHECK(grad(sum, cjax::allow_int)(np::zeros({3}, DType::i32)).dtype() == DType::i32);
  r = run_cli("grad - --wrt a", "{ lambda ; a:i32[3] x:f32[]. let b:f32[] = mul x x in (b,) }");
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: <stdin>: argument a: " + int_input + " (cjax grad --allow-int)\n");
  auto sin = [](const Array& a) { return np::sin(a); };
  CHECK(has(thrown<TypeError>([&] { grad(sin)(np::zeros({3})); }),
            "grad: gradient only defined for scalar-output functions, but the output has shape "
            "(3,)"));
}

TEST_CASE("errors: an unknown policy, example or file name is a usage error") {
  std::string msg = thrown<UsageError>([] { policies::by_name("bogus"); });
  CHECK(has(msg, "unknown policy 'bogus'; valid policies: everything_saveable, nothing_saveable"));
  auto r = run_cli("residuals --example tutorial/f --policy bogus");
  CHECK(r.code == 2);
  CHECK(has(r.err, "cjax: residuals: unknown policy 'bogus'; valid policies: "));
  check_one_line(r);
  r = run_cli("jaxpr --example no/such");
  CHECK(r.code == 2);
  CHECK(has(r.err, "cjax: example no/such: unknown example 'no/such'; examples: tutorial/f, "));
  check_one_line(r);
  r = run_cli("jaxpr no_such_file.jaxpr");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: no_such_file.jaxpr: cannot open 'no_such_file.jaxpr'\n");
  r = run_cli("grad --example tutorial/f --inputs 1,2");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: example tutorial/f: --inputs gives 2 values for 4 arguments\n");
}

TEST_CASE("errors: unknown commands and options name the real problem") {
  auto r = run_cli("grad --example tutorial/f --bogus");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: grad: unknown option --bogus (see cjax grad --help)\n");
  check_one_line(r);
  r = run_cli("run --example tutorial/f --wrt W1");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "cjax: run: unknown option --wrt: it is an option of grad, bench (see cjax run --help)\n");
  r = run_cli("bogus");
  CHECK(r.code == 2);
  CHECK(has(r.err, "cjax: unknown command 'bogus'; the commands are examples, jaxpr, "));
  check_one_line(r);
  r = run_cli("lower -e tutorial/f --emit");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: lower: --emit needs a value\n");
}

TEST_CASE("errors: bad option values are usage errors") {
  const std::string seeds = "a seed is an integer from 0 to 18446744073709551615 (2^64-1)";
  auto r = run_cli("grad --example tutorial/f --seed -1");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: grad: --seed -1: " + seeds + "\n");
  r = run_cli("run --example tutorial/f --seed 99999999999999999999999");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: run: --seed 99999999999999999999999: " + seeds + "\n");
  r = run_cli("residuals --example tutorial/f --budget ''");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: residuals: --budget: the value is empty\n");
  r = run_cli("run --example tutorial/sin_sin --inputs 1 --seed 0");
  CHECK(r.code == 2);
  CHECK(r.err == "cjax: run: --inputs and --seed both choose the inputs: give one of them\n");
}

TEST_CASE("errors: a name policy without its names, or with names the program lacks, warns") {
  auto r = run_cli("residuals --example tutorial/f4 --policy save_only_these_names --names a,x");
  CHECK(r.code == 0);  // a warning: the policy is valid, it just selects less than meant
  CHECK(r.err ==
        "cjax: example tutorial/f4: warning: --names: no value is named 'x', so the policy selects "
        "nothing by that name; the program's names are a, b, c\n");
}

TEST_CASE("errors: a C++ if on a traced value names the caller and the op that made the value") {
  auto f = [](const Array& x) {
    Array y = np::sin(x);
    return y.item() > 0 ? y : -y;
  };
  const int at = __LINE__ - 2;
  std::string msg = thrown<TypeError>([&] { make_jaxpr(f)(np::zeros({})); });
  INFO(msg);
  CHECK(msg.rfind("tests/errors/catalogue_test.cc:" + std::to_string(at) + ":", 0) == 0);
  CHECK(has(msg,
            "cannot read the value of a traced Array (f32[]) (in make_jaxpr or a "
            "transformation); it is the output of sin at tests/errors/catalogue_test.cc:" +
                std::to_string(at - 1) + ":"));
  CHECK(has(msg, "np::where or cjax::cond"));
}

TEST_CASE("errors: overlapping offload names") {
  CHECK(thrown<UsageError>([] {
          policies::save_and_offload_only_these_names({"a", "b"}, {"b"}, "device", "pinned_host");
        }) ==
        "save_and_offload_only_these_names: names in both the saved and the offloaded "
        "sets: b");
  auto r = run_cli(
      "residuals --example tutorial/f4 --policy save_and_offload_only_these_names --names a "
      "--offload-names a,b");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "cjax: residuals: save_and_offload_only_these_names: names in both the saved "
        "and the offloaded sets: a\n");
}

TEST_CASE("errors: malformed .npy input") {
  CHECK(thrown<Error>([] { io::read_npy("garbage"); }) ==
        "malformed .npy: the file does not start with the .npy magic \\x93NUMPY");
  std::string bad = temp_file("bad.npy", "garbage\n");
  auto r = run_cli("grad --example tutorial/sin_sin --inputs " + bad);
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: example tutorial/sin_sin: " + bad +
                     ": malformed .npy: the file does not start with the .npy magic \\x93NUMPY\n");
  std::remove(bad.c_str());
}

TEST_CASE("errors: malformed JSON IR") {
  CHECK(thrown<Error>([] { jaxpr_from_json("{\"jaxprs\": 3}"); }) ==
        "JSON jaxpr: $: missing \"format\"");
  auto r = run_cli("jaxpr -", "{\"jaxprs\": 3}");
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: <stdin>: JSON jaxpr: $: missing \"format\"\n");
  // Broken JSON syntax: a ParseError with line and column.
  std::string msg = thrown<ParseError>([] { jaxpr_from_json("{\"format\": \n ]"); });
  CHECK(has(msg, "2:"));
}

TEST_CASE("errors: a bad plugin") {
  std::string not_so = temp_file("not_a_plugin.so", "not an ELF file");
  auto r = run_cli("examples --plugin " + not_so);
  CHECK(r.code == 1);
  CHECK(has(r.err, "cjax: " + not_so + ": cannot load plugin '" + not_so + "': "));
  check_one_line(r);
  std::remove(not_so.c_str());
  r = run_cli("examples --plugin no_such_plugin.so");
  CHECK(r.code != 0);
  CHECK(has(r.err, "no_such_plugin.so"));
}

namespace {

// n jaxprs in JSON, each calling the one before with jit: n levels of nesting in shallow JSON.
std::string json_jit_chain(int n) {
  const std::string aval = R"("aval": {"dtype": "f32", "shape": []})";
  std::string out = R"({"format": "cjax-jaxpr", "version": 1, "main": )" + std::to_string(n - 1) +
                    R"(, "jaxprs": [)";
  for (int k = 0; k < n; ++k) {
    std::string a = std::to_string(2 * k), b = std::to_string(2 * k + 1);
    std::string eqns, result = a;
    if (k > 0) {
      eqns = R"({"primitive": "jit", "inputs": [{"var": )" + a + R"(}], "outputs": [{"id": )" + b +
             ", " + aval + R"(}], "params": {"name": "f", "jaxpr": {"jaxpr": )" +
             std::to_string(k - 1) + "}}}";
      result = b;
    }
    out += std::string(k ? ", " : "") + R"({"constvars": [], "invars": [{"id": )" + a + ", " +
           aval + R"(}], "eqns": [)" + eqns + R"(], "outvars": [{"var": )" + result + "}]}";
  }
  return out + "]}";
}

// `let` preambles: n levels, each jaxpr calling the one before `calls` times.
std::string text_jit_chain(int n, int calls) {
  std::string text = "let f0 = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in\n";
  for (int k = 1; k < n; ++k) {
    text += "let f" + std::to_string(k) + " = { lambda ; v0:f32[]. let\n";
    for (int c = 0; c < calls; ++c)
      text += "    v" + std::to_string(c + 1) + ":f32[] = jit[name=f jaxpr=f" +
              std::to_string(k - 1) + "] v" + std::to_string(c) + "\n";
    text += "  in (v" + std::to_string(calls) + ",) } in\n";
  }
  return text + "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=f" + std::to_string(n - 1) +
         "] a in (b,) }\n";
}

}  // namespace

TEST_CASE("errors: input beyond the readers' limits") {
  std::string ones = "1";
  for (int i = 1; i < 5000; ++i) ones += ",1";
  std::string deep_params = json_jit_chain(1);
  deep_params.replace(
      deep_params.find("\"eqns\": []"), 10,
      R"("eqns": [{"primitive": "p", "inputs": [], "outputs": [], "params": {"x": )" +
          std::string(100000, '[') + std::string(100000, ']') + "}}]");
  struct Input {
    std::string name, bytes, message;
  };
  const std::string nesting = "nesting deeper than 100 levels is not supported";
  // Each once crashed (SIGSEGV) or ran for minutes.
  const std::vector<Input> inputs = {
      {"jit_chain.json", json_jit_chain(10000),
       "JSON jaxpr: jaxprs[100].eqns[0].params.jaxpr.jaxpr: " + nesting},
      {"deep_params.json", deep_params, "JSON nested deeper than 208 levels is not supported"},
      {"jit_chain.jaxpr", text_jit_chain(10000, 1), nesting},
      {"jit_doubling.jaxpr", text_jit_chain(60, 2),
       "the program expands to more than 1000000 equations (a nested jaxpr counts at each use)"},
      {"rank.jaxpr", "{ lambda ; a:f32[" + ones + "]. let b:f32[" + ones + "] = sin a in (b,) }",
       "1:14: rank 5000 exceeds the limit of 64 dimensions"},
  };
  for (const Input& in : inputs) {
    std::string path = temp_file(in.name, in.bytes);
    for (const char* sub : {"jaxpr", "grad", "residuals", "fwd-bwd", "run", "lower --emit llvm"}) {
      auto r = run_cli(std::string(sub) + " " + path);
      INFO(sub << " " << in.name);
      CHECK(r.code == 1);
      check_one_line(r);
      CHECK(has(r.err, in.message));
    }
    std::remove(path.c_str());
  }
  // A rank-65 .npy input.
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + ones.substr(0, 129) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
                    static_cast<char>(header.size() >> 8) + header + std::string(4, '\0');
  std::string x = temp_file("rank65.npy", npy);
  auto r = run_cli("grad --example tutorial/sin_sin --inputs " + x);
  CHECK(r.code == 1);
  CHECK(r.err == "cjax: example tutorial/sin_sin: " + x +
                     ": malformed .npy: rank 65 exceeds the limit of 64 dimensions\n");
  std::remove(x.c_str());
}
