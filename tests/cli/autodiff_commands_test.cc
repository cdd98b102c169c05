// `cjax residuals`, `cjax fwd-bwd` and `cjax grad` as a user runs them.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tests/cli/run_cli.h"

using cli_test::run_cli;

namespace {

// Each line up to " from " (source locations differ from JAX's notebook files), keeping the
// function name in parentheses, as the comparison asks.
std::vector<std::string> normalised(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t from = line.find(" from ");
    size_t paren = line.rfind(" (");
    if (from != std::string::npos && line.find("from the argument") == std::string::npos &&
        paren != std::string::npos)
      line = line.substr(0, from) + line.substr(paren);
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("cjax residuals --example tutorial/f prints JAX's lines (jax-outputs.md §2.2)") {
  auto r = run_cli("residuals --example tutorial/f");
  REQUIRE(r.code == 0);
  CHECK(normalised(r.out) ==
        std::vector<std::string>{"f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
                                 "f32[7,6] from the argument W3", "f32[4] from the argument x",
                                 "f32[5] output of sin (g)", "f32[5] output of cos (g)",
                                 "f32[6] output of sin (g)", "f32[6] output of cos (g)",
                                 "f32[7] output of cos (g)"});
  CHECK(r.out.find("from examples/tutorial.cc:") != std::string::npos);
}

TEST_CASE("cjax residuals --policy is the tutorial's f3 (jax-outputs.md §2.4)") {
  auto r = run_cli("residuals --example tutorial/f --policy dots_with_no_batch_dims_saveable");
  REQUIRE(r.code == 0);
  CHECK(normalised(r.out) ==
        std::vector<std::string>{"f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
                                 "f32[7,6] from the argument W3", "f32[4] from the argument x",
                                 "f32[5] output of dot_general (g)",
                                 "f32[6] output of dot_general (g)",
                                 "f32[7] output of dot_general (g)"});
}

TEST_CASE("cjax residuals --bytes and --json report sizes") {
  auto r = run_cli("residuals --example tutorial/f --bytes");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("f32[5,4] from the argument W1  [80 B]\n") != std::string::npos);
  // 80 + 120 + 168 + 16 + 20 + 20 + 24 + 24 + 28 bytes
  CHECK(r.out.find("total: 9 residuals, 500 B (500 bytes)\n") != std::string::npos);
  auto j = run_cli("residuals --example tutorial/f --json");
  REQUIRE(j.code == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["count"] == 9);
  CHECK(doc["total_bytes"] == 500);
  CHECK(doc["residuals"][0]["aval"] == "f32[5,4]");
  CHECK(doc["residuals"][0]["shape"] == nlohmann::json::array({5, 4}));
  CHECK(doc["residuals"][0]["description"] == "from the argument W1");
}

TEST_CASE("cjax residuals rejects unknown policies with the valid list") {
  auto r = run_cli("residuals --example tutorial/f --policy nope");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown policy 'nope'; valid policies: everything_saveable") !=
        std::string::npos);
  auto overlap = run_cli(
      "residuals --example tutorial/f --policy save_and_offload_only_these_names --names a "
      "--offload-names a");
  CHECK(overlap.code == 2);
  CHECK(overlap.err.find("names in both the saved and the offloaded sets: a") != std::string::npos);
}

TEST_CASE("cjax fwd-bwd prints JAX's forward program and the two-column table") {
  auto fwd = run_cli("fwd-bwd --example tutorial/f --only fwd");
  REQUIRE(fwd.code == 0);
  CHECK(fwd.out.find("  in (l, a, b, c, d, g, f, j, i, m) }\n") != std::string::npos);
  auto table = run_cli("fwd-bwd --example tutorial/f");
  REQUIRE(table.code == 0);
  CHECK(table.out.rfind("  forward computation:", 0) == 0);
  CHECK(table.out.find("backward computation:") == 63);
  auto stacked = run_cli("fwd-bwd --example tutorial/f --layout stacked");
  CHECK(stacked.out.rfind("forward computation:\n{ lambda", 0) == 0);
}

TEST_CASE("cjax fwd-bwd reads jaxpr files and names arguments after their variables") {
  auto r =
      run_cli("residuals -",
              "{ lambda ; w:f32[3] v:f32[3]. let u:f32[3] = mul w v; t:f32[3] = sin u in (t,) }");
  REQUIRE(r.code == 0);
  CHECK(normalised(r.out) == std::vector<std::string>{"f32[3] from the argument w",
                                                      "f32[3] from the argument v",
                                                      "f32[3] output of cos from unknown"});
  auto named = run_cli("residuals - --arg-names a,b",
                       "{ lambda ; w:f32[3] v:f32[3]. let u:f32[3] = mul w v in (u,) }");
  CHECK(named.out == "f32[3] from the argument a\nf32[3] from the argument b\n");
  CHECK(run_cli("residuals - --arg-names a", "{ lambda ; w:f32[3] v:f32[3]. let in (w,) }").code ==
        2);
}

TEST_CASE("cjax grad prints the value and gradient of sin(sin(x)) at 2.0") {
  auto r = run_cli("grad --example tutorial/sin_sin");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("value: Array(0.78907233, dtype=float32)\ngrad x: Array(-0.255639", 0) == 0);
  auto at = run_cli("grad --example tutorial/sin_sin --inputs 0");
  CHECK(at.out == "value: Array(0., dtype=float32)\ngrad x: Array(1., dtype=float32)\n");
}

TEST_CASE("cjax grad follows JAX's dtype rules: float outputs, integer arguments left out") {
  auto int_out = run_cli(
      "grad -",
      "{ lambda ; a:i32[3]. let b:i32[] = reduce_sum[axes=(0,) out_sharding=None] a in (b,) }");
  CHECK(int_out.code == 1);
  CHECK(int_out.out.empty());
  CHECK(int_out.err ==
        "cjax: <stdin>: grad requires real-valued outputs (output dtype that is a sub-dtype of "
        "np.floating), but got int32. For differentiation of functions with integer outputs, use "
        "vjp directly.\n");
  // lookup_loss(table f32[8], ids i32[4]) = sum(sin(one_hot(ids) @ table)); ids all 1.
  const std::string lookup = "grad --plugin " + std::string(CJAX_TEST_PLUGIN_DIR) +
                             "/libcjax_test_plugin.so -f lookup_loss --inputs 0,1";
  auto r = run_cli(lookup);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "value: Array(0., dtype=float32)\n"
        "(gradients with respect to the floating-point arguments; not differentiated: ids "
        "(integers); --wrt and --allow-int choose)\n"
        "grad table: Array([0., 4., 0., 0., 0., 0., 0., 0.], dtype=float32)\n");
  CHECK(run_cli(lookup + " --wrt table").out ==
        "value: Array(0., dtype=float32)\n"
        "grad table: Array([0., 4., 0., 0., 0., 0., 0., 0.], dtype=float32)\n");
  auto ids = run_cli(lookup + " --wrt ids");
  CHECK(ids.code == 1);
  CHECK(ids.err ==
        "cjax: function lookup_loss: argument ids: grad requires real- or complex-valued inputs "
        "(input dtype that is a sub-dtype of np.inexact), but got int32. If you want to use "
        "Boolean- or integer-valued inputs, use vjp or set allow_int to True. (cjax grad "
        "--allow-int)\n");
  auto allow = run_cli(lookup + " --allow-int");
  CHECK(allow.code == 0);
  CHECK(allow.out ==
        "value: Array(0., dtype=float32)\n"
        "grad table: Array([0., 4., 0., 0., 0., 0., 0., 0.], dtype=float32)\n"
        "grad ids: Array([0, 0, 0, 0], dtype=int32)\n");
  CHECK(run_cli(lookup + " --wrt ids --allow-int").out ==
        "value: Array(0., dtype=float32)\ngrad ids: Array([0, 0, 0, 0], dtype=int32)\n");
  auto nope = run_cli(lookup + " --wrt nope");
  CHECK(nope.code == 2);
  CHECK(nope.err ==
        "cjax: function lookup_loss: --wrt: no argument named 'nope' (the arguments are table, "
        "ids)\n");
  // Only integer arguments: JAX's TypeError for the first.
  auto only_ints =
      run_cli("grad -",
              "{ lambda ; a:i32[3]. let\n"
              "    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
              "    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
              "  in (c,) }");
  CHECK(only_ints.code == 1);
  CHECK(only_ints.err ==
        "cjax: <stdin>: argument a: grad requires real- or complex-valued inputs (input dtype that "
        "is a sub-dtype of np.inexact), but got int32. If you want to use Boolean- or "
        "integer-valued inputs, use vjp or set allow_int to True. (cjax grad --allow-int)\n");
}

TEST_CASE("name policies warn about missing names and names the program never defines") {
  auto none = run_cli("residuals -e tutorial/f4 --policy save_only_these_names");
  CHECK(none.code == 0);
  CHECK(!none.out.empty());
  CHECK(none.err ==
        "cjax: example tutorial/f4: warning: save_only_these_names without --names selects no "
        "value by name; the program's names are a, b, c\n");
  auto typo = run_cli("residuals -e tutorial/f4 --policy save_any_names_but_these --names a,zz");
  CHECK(typo.code == 0);
  CHECK(typo.err ==
        "cjax: example tutorial/f4: warning: --names: no value is named 'zz', so the policy "
        "selects nothing by that name; the program's names are a, b, c\n");
  CHECK(run_cli("fwd-bwd -e tutorial/f --policy save_only_these_names --names a,b").err ==
        "cjax: example tutorial/f: warning: --names: no value is named 'a' or 'b', so the policy "
        "selects nothing by those names; the program names no values (checkpoint_name names "
        "them)\n");
  CHECK(run_cli("residuals -e tutorial/f4 --policy dots_saveable --names a").err ==
        "cjax: example tutorial/f4: warning: --names is ignored with --policy dots_saveable: only "
        "the name policies read it\n");
  CHECK(run_cli("grad -e tutorial/f4 --names a").err ==
        "cjax: example tutorial/f4: warning: --names is ignored without --policy: only the name "
        "policies read it\n");
  auto offload = run_cli(
      "residuals -e tutorial/f4 --policy save_and_offload_only_these_names --names a "
      "--offload-names q");
  CHECK(offload.code == 0);
  CHECK(offload.err ==
        "cjax: example tutorial/f4: warning: --offload-names: no value is named 'q', so the policy "
        "selects nothing by that name; the program's names are a, b, c\n");
  CHECK(run_cli("residuals -e tutorial/f4 --policy save_and_offload_only_these_names").err ==
        "cjax: example tutorial/f4: warning: save_and_offload_only_these_names without --names "
        "or --offload-names selects no value by name; the program's names are a, b, c\n");
  // Right names: no warning.
  CHECK(run_cli("residuals -e tutorial/f4 --policy save_only_these_names --names a").err.empty());
  // cjax memory --names adds the name policies' rows.
  auto memory = run_cli("memory -e tutorial/f4 --names a,zz --budgets 1MiB");
  CHECK(memory.code == 0);
  CHECK(memory.err ==
        "cjax: example tutorial/f4: warning: --names: no value is named 'zz', so the policy "
        "selects nothing by that name; the program's names are a, b, c\n");
}

// --per-process: the body of a shard_map program as each process differentiates it, on its
// blocks (a loss of an FSDP layer over 4 processes: w's f32[2,2] rows gathered to f32[8,2]).
TEST_CASE("cjax residuals and memory --per-process read a shard_map's body") {
  const std::string file = std::string(CJAX_SOURCE_DIR) + "/tests/mpi/fsdp_loss.jaxpr";
  auto r = run_cli("residuals " + file + " --per-process --arg-names w,xs --bytes");
  REQUIRE(r.code == 0);
  // The gathered weight is saved unless a policy says otherwise; the block's rows of the batch
  // are an argument.
  CHECK(r.out.find("f32[4,8] from the argument xs  [128 B]\n") != std::string::npos);
  CHECK(r.out.find("f32[8,2] output of all_gather") != std::string::npos);
  CHECK(r.out.find("total: 4 residuals, 256 B (256 bytes)\n") != std::string::npos);
  auto none =
      run_cli("residuals " + file + " --per-process --arg-names w,xs --policy nothing_saveable");
  REQUIRE(none.code == 0);
  CHECK(none.out == "f32[2,2] from the argument w\nf32[4,8] from the argument xs\n");
  auto m = run_cli("memory " + file + " --per-process");
  REQUIRE(m.code == 0);
  CHECK(m.out.find("nothing_saveable") != std::string::npos);
  CHECK(m.out.find("arguments: 144 B") != std::string::npos);  // the blocks: 16 + 128 bytes
  // Without it, the whole program's: every device's residuals, split along their leading
  // dimension (the gathered weight's four copies are f32[32,2]).
  auto whole = run_cli("residuals " + file);
  REQUIRE(whole.code == 0);
  CHECK(whole.out ==
        "f32[16,8] from the argument b\nf32[32,2] output of shard_map from unknown\n"
        "f32[16,2] output of shard_map from unknown\nf32[16,2] output of shard_map from unknown\n");
  auto plain = run_cli("residuals --example tutorial/f --per-process");
  CHECK(plain.code == 2);  // a usage error, as --per-process asks what the program lacks
  CHECK(plain.err.find("--per-process reads the body of a program's one shard_map equation, but "
                       "this program has 0") != std::string::npos);
}
