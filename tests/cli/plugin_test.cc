// `--plugin LIB --function NAME`: the user's own functions in the CLI, and every way loading a
// plugin can fail.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include <filesystem>

#include "io/npy.h"
#include "io/npz.h"
#include "tests/cli/run_cli.h"

using cli_test::plugin_path;
using cli_test::run_cli;

namespace {

const std::string good = plugin_path("cjax_test_plugin");
const std::string bad = plugin_path("cjax_test_bad_plugin");

// Runs the CLI with bad_plugin.cc breaking the plugin contract in the way `fault` names.
cli_test::Result run_with_fault(const std::string& fault, const std::string& args) {
  setenv("CJAX_TEST_PLUGIN_FAULT", fault.c_str(), 1);
  cli_test::Result r = run_cli(args);
  unsetenv("CJAX_TEST_PLUGIN_FAULT");
  return r;
}

}  // namespace

TEST_CASE("cjax examples --plugin lists the functions a plugin registers") {
  auto r = run_cli("examples --plugin " + good);
  REQUIRE(r.code == 0);
  CHECK(r.out ==
        "mlp_loss        (W1:f32[3,4], W2:f32[2,3], x:f32[4])  a two-layer tanh/sin network "
        "summed to a scalar\n"
        "scale_shift     (x:f32[3], s:f32[])\n"
        "lookup_loss     (table:f32[8], ids:i32[4])\n"
        "bad_specs       (x:f32[3])\n"
        "tree_loss       (params.layers[0].W:f32[3,3], params.layers[0].b:f32[3], "
        "params.layers[1].W:f32[3,3], params.layers[1].b:f32[3], params.scale:f32[], x:f32[3])  "
        "tanh layers of a parameter struct\n"
        "tree_step       (params.layers[0].W:f32[3,3], params.layers[0].b:f32[3], "
        "params.layers[1].W:f32[3,3], params.layers[1].b:f32[3], params.scale:f32[], x:f32[3])\n"
        "tree_bad_names  ()\n");
}

TEST_CASE("a plugin function of a parameter struct: leaves named by path, inputs by name") {
  auto res = run_cli("residuals -p " + good + " -f tree_loss");
  REQUIRE(res.code == 0);
  CHECK(res.out.find("f32[3,3] from the argument params.layers[1].W\n") != std::string::npos);
  CHECK(res.out.find("f32[] from the argument params.scale\n") != std::string::npos);

  // The same six arrays given as numbers, as a directory of <name>.npy files and as one .npz.
  const std::vector<std::string> names = {"params.layers[0].W", "params.layers[0].b",
                                          "params.layers[1].W", "params.layers[1].b",
                                          "params.scale",       "x"};
  const std::vector<cjax::ShapedArray> avals = {
      {cjax::DType::f32, {3, 3}}, {cjax::DType::f32, {3}}, {cjax::DType::f32, {3, 3}},
      {cjax::DType::f32, {3}},    {cjax::DType::f32, {}},  {cjax::DType::f32, {3}}};
  const std::vector<double> fills = {0.1, 0.0, 0.2, 0.5, 2.0, 1.0};
  // The files' names: what is not a letter, digit, '-' or '.' becomes one '_'.
  const std::vector<std::string> stems = {"params.layers_0_.W", "params.layers_0_.b",
                                          "params.layers_1_.W", "params.layers_1_.b",
                                          "params.scale",       "x"};
  const auto dir =
      std::filesystem::temp_directory_path() / ("cjax_tree_inputs_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  cjax::io::NamedBuffers archive;
  for (size_t i = 0; i < names.size(); ++i) {
    auto b = cjax::runtime::Buffer::full(avals[i], fills[i]);
    cjax::io::save_npy((dir / (stems[i] + ".npy")).string(), b);
    archive.emplace_back(names[i], b);
  }
  const std::string npz = (dir / "inputs.npz").string();
  cjax::io::save_npz(npz, archive);
  auto numbers = run_cli("grad -p " + good + " -f tree_loss --inputs 0.1,0,0.2,0.5,2,1");
  REQUIRE(numbers.code == 0);
  auto from_dir = run_cli("grad -p " + good + " -f tree_loss --inputs " + dir.string());
  REQUIRE(from_dir.code == 0);
  CHECK(from_dir.out == numbers.out);
  auto from_npz = run_cli("grad -p " + good + " -f tree_loss --inputs " + npz);
  REQUIRE(from_npz.code == 0);
  CHECK(from_npz.out == numbers.out);
  CHECK(numbers.out.find("grad params.layers[1].W: ") != std::string::npos);

  // A missing array is named; so is one of the wrong shape.
  std::filesystem::remove(dir / "params.scale.npy");
  auto missing = run_cli("grad -p " + good + " -f tree_loss --inputs " + dir.string());
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no <name>.npy file for 1 of the 6 arguments: params.scale") !=
        std::string::npos);
  archive[5].second = cjax::runtime::Buffer::full({cjax::DType::f32, {4}}, 1.0);
  cjax::io::save_npz(npz, archive);
  auto shape = run_cli("grad -p " + good + " -f tree_loss --inputs " + npz);
  CHECK(shape.code == 1);
  CHECK(shape.err.find("argument x is f32[3], but " + npz + "'s 'x' holds f32[4]") !=
        std::string::npos);
  std::filesystem::remove_all(dir);

  auto named = run_cli("grad -p " + good + " -f tree_bad_names");
  CHECK(named.code == 1);
  CHECK(named.err.find("registers 1 argument names for 2 example arguments") != std::string::npos);
}

TEST_CASE("cjax run names a returned struct's leaves by path, and --out writes them so") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cjax_tree_outputs_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto r = run_cli("run -p " + good + " -f tree_step --inputs 1,0,2,0,3,1 --backend interpreter " +
                   "--out " + dir.string());
  REQUIRE(r.code == 0);
  for (const char* line : {"out_0.layers[0].W: Array([[0.5, 0.5, 0.5],",
                           "out_0.layers[1].b: Array([1., 1., 1.], dtype=float32)",
                           "out_0.scale: Array(6., dtype=float32)", "out_1: Array("}) {
    INFO(line);
    CHECK(r.out.find(line) != std::string::npos);
  }
  for (const char* stem : {"out_0.layers_0_.W", "out_0.layers_0_.b", "out_0.layers_1_.W",
                           "out_0.layers_1_.b", "out_0.scale", "out_1"}) {
    INFO(stem);
    CHECK(std::filesystem::exists(dir / (std::string(stem) + ".npy")));
  }
  // Written by path, read back by the same names: the updated layers feed the next step.
  auto loss = run_cli(
      "run -p " + good + " -f tree_loss --backend interpreter --inputs " +
      (dir / "out_0.layers_0_.W.npy").string() + "," + (dir / "out_0.layers_0_.b.npy").string() +
      "," + (dir / "out_0.layers_1_.W.npy").string() + "," +
      (dir / "out_0.layers_1_.b.npy").string() + "," + (dir / "out_0.scale.npy").string() + ",1");
  CHECK(loss.code == 0);
  CHECK(loss.out.rfind("out: Array(", 0) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a plugin's function is traced, differentiated and reported like an example") {
  auto res = run_cli("residuals --plugin " + good + " --function mlp_loss");
  REQUIRE(res.code == 0);
  CHECK(res.out ==
        "f32[3,4] from the argument W1\n"
        "f32[2,3] from the argument W2\n"
        "f32[4] from the argument x\n"
        "f32[3] output of tanh from tests/cli/plugin/test_plugin.cc:10:27 (mlp_loss)\n"
        "f32[3] output of sub from tests/cli/plugin/test_plugin.cc:10:27 (mlp_loss)\n"
        "f32[2] output of cos from tests/cli/plugin/test_plugin.cc:11:25 (mlp_loss)\n");
  // A policy applies to plugin functions too: saving only the dots keeps the dots' outputs.
  auto dots = run_cli("residuals -p " + good + " -f mlp_loss --policy dots_saveable");
  REQUIRE(dots.code == 0);
  CHECK(dots.out.find("output of dot_general") != std::string::npos);
  CHECK(dots.out.find("output of tanh") == std::string::npos);

  auto jaxpr = run_cli("jaxpr -p " + good + " -f scale_shift");
  REQUIRE(jaxpr.code == 0);
  CHECK(jaxpr.out ==
        "{ lambda ; a:f32[3] b:f32[]. let\n"
        "    c:f32[3] = mul a b\n"
        "    d:f32[3] = add c 1.0:f32[]\n"
        "  in (d,) }\n");
  auto fb = run_cli("fwd-bwd -p " + good + " -f scale_shift --only bwd");
  REQUIRE(fb.code == 0);
  CHECK(fb.out.find("reduce_sum") != std::string::npos);  // the broadcast scalar's cotangent

  // grad of sum(x * s + 1) at x = 2, s = 3: d/dx = s, d/ds = sum(x).
  auto grad = run_cli("grad -p " + good + " -f scale_shift --inputs 2,3");
  REQUIRE(grad.code == 0);
  CHECK(grad.out ==
        "value: Array([7., 7., 7.], dtype=float32)\n"
        "(the output is not a scalar: gradients are of the sum of its elements)\n"
        "grad x: Array([3., 3., 3.], dtype=float32)\n"
        "grad s: Array(6., dtype=float32)\n");
}

TEST_CASE("plugin errors name the plugin and what is wrong") {
  auto missing = run_cli("residuals --plugin /no/such/libmodel.so --function loss");
  CHECK(missing.code == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err == "cjax: function loss: plugin '/no/such/libmodel.so' does not exist\n");

  auto no_fn = run_cli("residuals --plugin " + good + " --function lossy");
  CHECK(no_fn.code == 2);
  CHECK(no_fn.err == "cjax: function lossy: plugin '" + good +
                         "' has no function 'lossy'; it registers: mlp_loss, scale_shift, "
                         "lookup_loss, bad_specs, tree_loss, tree_step, tree_bad_names\n");

  auto old =
      run_cli("jaxpr --plugin " + plugin_path("cjax_test_plugin_old") + " --function mlp_loss");
  CHECK(old.code == 1);
  CHECK(old.err.find("was built against cjax 0.0.1 (plugin ABI 0, g++ 12, cxx11 abi 1), but this "
                     "is cjax ") != std::string::npos);
  CHECK(old.err.find(": rebuild it\n") != std::string::npos);

  auto not_plugin = run_cli("examples --plugin " + plugin_path("cjax_test_not_plugin"));
  CHECK(not_plugin.code == 1);
  CHECK(not_plugin.err.find("is not a cjax plugin: it has no cjax_plugin_abi symbol") !=
        std::string::npos);

  // A file that is not a shared library at all.
  auto not_so = run_cli("examples --plugin " + std::string(CJAX_SOURCE_DIR) + "/README.md");
  CHECK(not_so.code == 1);
  CHECK(not_so.err.find("cannot load plugin") != std::string::npos);

  auto bad = run_cli("jaxpr -p " + good + " -f bad_specs");
  CHECK(bad.code == 1);
  CHECK(bad.err ==
        "cjax: function bad_specs: function 'bad_specs' takes 2 arguments but "
        "registers 1 specs\n");

  CHECK(run_cli("jaxpr --plugin " + good).code == 2);  // no --function
  CHECK(run_cli("jaxpr --function mlp_loss").code == 2);
  CHECK(run_cli("jaxpr --plugin " + good + " --function mlp_loss --example tutorial/f").code == 2);
}

TEST_CASE("everything read from a plugin is checked: NULLs, names, descriptions, specs") {
  // Unbroken, the bad plugin registers one function.
  auto fine = run_with_fault("", "examples --plugin " + bad);
  REQUIRE(fine.code == 0);
  CHECK(fine.out == "ok  (x:f32[3])\n");

  std::string rank65 = "f32[1";
  for (int i = 1; i < 65; ++i) rank65 += ",1";
  rank65 += "]";
  struct Case {
    const char* fault;
    std::string message;  // after "plugin 'PATH': "
  };
  const std::vector<Case> cases = {
      {"null_abi", "cjax_plugin_abi() returned NULL"},
      {"null_functions", "cjax_plugin_functions() returned NULL"},
      {"throwing_functions", "cjax_plugin_functions() threw: no functions today"},
      {"empty_name", "function 1 has an empty name"},
      {"spaced_name", "function 'my loss' has a name with spaces or control characters"},
      {"duplicate_name", "function 'ok' is registered twice"},
      {"multiline_description", "function 'ok' has a description that is not one line"},
      {"no_make_jaxpr", "function 'ok' has nothing to trace (its make_jaxpr is empty)"},
      {"rank_spec", "function 'r': bad argument spec '" + rank65.substr(0, 60) +
                        "...': rank 65 exceeds the limit of 64 dimensions (expected e.g. "
                        "f32[4,4] or f32[])"},
      {"huge_spec",
       "function 'h': bad argument spec 'f32[999999999999,999999999999]': "
       "f32[999999999999,999999999999] has too many elements: the product of its dimensions "
       "overflows int64 (expected e.g. f32[4,4] or f32[])"},
      {"garbage_spec",
       "function 'g': bad argument spec 'f32[3\\x0a]': it holds a control character (expected "
       "e.g. f32[4,4] or f32[])"},
      {"names_mismatch", "function 'n' registers 2 argument names for 1 specs"},
      {"empty_arg_name",
       "function 'e' has an argument name that is empty or has spaces or control characters: ''"},
  };
  for (const Case& c : cases) {
    // Listing the functions and using one both load (and check) the plugin.
    auto list = run_with_fault(c.fault, "examples --plugin " + bad);
    INFO(c.fault << "\n" << list.err);
    CHECK(list.code == 1);
    CHECK(list.out.empty());
    CHECK(list.err == "cjax: " + bad + ": plugin '" + bad + "': " + c.message + "\n");
    auto use = run_with_fault(c.fault, "jaxpr --plugin " + bad + " --function ok");
    CHECK(use.code == 1);
    CHECK(use.err == "cjax: function ok: plugin '" + bad + "': " + c.message + "\n");
  }
}
