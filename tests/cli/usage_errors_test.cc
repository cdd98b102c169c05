// Usage errors (exit code 2) read `cjax: <command>: <message>` and name the real problem: unknown
// commands and options (with the commands that have such an option, or a near miss), CLI11's
// other complaints in our words, empty option values, and what the program source options need.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/cli/run_cli.h"

using cli_test::run_cli;

namespace {

const std::string kTestPlugin = cli_test::plugin_path("cjax_test_plugin");

// A usage error: exit code 2, nothing on stdout, one line on stderr.
void check_usage_error(const std::string& args, const std::string& line) {
  INFO("cjax " << args);
  auto r = run_cli(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == line + "\n");
}

}  // namespace

TEST_CASE("usage: an unknown option is named, with the commands that have it") {
  check_usage_error("grad --example tutorial/f --bogus",
                    "cjax: grad: unknown option --bogus (see cjax grad --help)");
  check_usage_error("grad --example tutorial/f --bogus=3",
                    "cjax: grad: unknown option --bogus (see cjax grad --help)");
  check_usage_error("grad -e tutorial/f -z",
                    "cjax: grad: unknown option -z (see cjax grad --help)");
  // The case: the value of an option grad lacks was read as the FILE, and CLI11 said
  // "--plugin excludes file". (grad has --wrt now; run does not.)
  check_usage_error("run -p " + kTestPlugin + " -f mlp_loss --wrt W1",
                    "cjax: run: unknown option --wrt: it is an option of grad, bench (see cjax run "
                    "--help)");
  check_usage_error("residuals -e tutorial/f --budgets 1MiB",
                    "cjax: residuals: unknown option --budgets: it is an option of memory (see "
                    "cjax residuals --help)");
  check_usage_error(
      "grad -e tutorial/f --sed 3",
      "cjax: grad: unknown option --sed; did you mean --seed? (see cjax grad --help)");
  check_usage_error("--seed 3 run -e tutorial/f",
                    "cjax: --seed is an option of grad, run: put it after the command");
  check_usage_error("--bogus jaxpr -e tutorial/f",
                    "cjax: unknown option --bogus (see cjax --help)");
  // Values and positionals that start with '-' are not options.
  CHECK(run_cli("run -e tutorial/sin_sin --inputs -0.5").code == 0);
  CHECK(run_cli("jaxpr -", "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }").code == 0);
  // The app's options follow the command too.
  CHECK(run_cli("jaxpr -e tutorial/sin_sin --verbose").code == 0);
  CHECK(run_cli("jaxpr -e tutorial/sin_sin -v").code == 0);
}

TEST_CASE("usage: unknown and missing commands, stray arguments") {
  check_usage_error("bogus",
                    "cjax: unknown command 'bogus'; the commands are examples, jaxpr, residuals, "
                    "fwd-bwd, grad, run, lower, bench, memory, comms (see cjax --help)");
  check_usage_error("",
                    "cjax: a command is required: examples, jaxpr, residuals, fwd-bwd, grad, "
                    "run, lower, bench, memory, comms (see cjax --help)");
  check_usage_error("jaxpr a.jaxpr b.jaxpr",
                    "cjax: jaxpr: unexpected argument b.jaxpr (a command reads one program: "
                    "--example, --plugin or a FILE)");
}

TEST_CASE("usage: CLI11's complaints about values, in our words") {
  check_usage_error("grad -e tutorial/f --seed", "cjax: grad: --seed needs a value");
  check_usage_error("bench -e tutorial/f -r abc",
                    "cjax: bench: --repetitions: Value abc not in range 1 to 1000000");
  check_usage_error("bench -e tutorial/f -r 0",
                    "cjax: bench: --repetitions: Value 0 not in range 1 to 1000000");
  check_usage_error("run -e tutorial/f --backend gpu",
                    "cjax: run: --backend: gpu not in {cpu,interpreter,cuda}");
}

TEST_CASE("usage: an empty value is an error, not the option unset") {
  check_usage_error("residuals -e tutorial/f --budget ''",
                    "cjax: residuals: --budget: the value is empty");
  check_usage_error("residuals -e tutorial/f --policy ''",
                    "cjax: residuals: --policy: the value is empty");
  check_usage_error("run -e tutorial/f --inputs ''", "cjax: run: --inputs: the value is empty");
  check_usage_error("jaxpr ''", "cjax: jaxpr: the FILE name is empty");
}

TEST_CASE("usage: the program comes from exactly one source") {
  const std::string one =
      "cjax: jaxpr: give one of --example NAME, --plugin LIB --function NAME, or a FILE";
  check_usage_error("jaxpr", one);
  check_usage_error("jaxpr -e tutorial/f f.jaxpr", one);
  check_usage_error("grad -e tutorial/f -p " + kTestPlugin + " -f mlp_loss",
                    "cjax: grad: give one of --example NAME, --plugin LIB --function NAME, or a "
                    "FILE");
  check_usage_error("jaxpr -f mlp_loss", "cjax: jaxpr: --function needs --plugin");
  check_usage_error("jaxpr -p " + kTestPlugin,
                    "cjax: jaxpr: --plugin needs --function NAME (`cjax examples --plugin LIB` "
                    "lists them)");
}

TEST_CASE("usage: a list option takes one argument, so the FILE after it stays the FILE") {
  std::string path = std::string(CJAX_BINARY_DIR) + "/usage_sin.jaxpr";
  std::ofstream(path) << "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }\n";
  auto r = run_cli("run --inputs 0 " + path);
  CHECK(r.code == 0);
  CHECK(r.out == "out: Array(0., dtype=float32)\n");
  std::filesystem::remove(path);
}

TEST_CASE("usage: option values that need no program are checked before it is read") {
  auto policy = run_cli("residuals -e tutorial/f --policy bogus");
  CHECK(policy.code == 2);
  CHECK(policy.err.rfind("cjax: residuals: unknown policy 'bogus'; valid policies: ", 0) == 0);
  check_usage_error("grad -e tutorial/f --budget lots",
                    "cjax: grad: 'lots' is not a size: write bytes or a number with B, KiB, MiB, "
                    "GiB, kB, MB or GB");
  check_usage_error("fwd-bwd -e tutorial/f --budget 1MiB --policy dots_saveable",
                    "cjax: fwd-bwd: --policy and --budget both choose what to save: give one");
  check_usage_error(
      "bench -e tutorial/f --policy save_and_offload_only_these_names --names a "
      "--offload-names a",
      "cjax: bench: save_and_offload_only_these_names: names in both the saved and "
      "the offloaded sets: a");
  check_usage_error("memory -e tutorial/f --budgets 1MiB,lots",
                    "cjax: memory: 'lots' is not a size: write bytes or a number with B, KiB, "
                    "MiB, GiB, kB, MB or GB");
  check_usage_error("lower -e tutorial/f --emit ptx",
                    "cjax: lower: --emit ptx needs --target cuda; the cpu target emits mlir, "
                    "lowered or llvm");
  check_usage_error("lower -e tutorial/f --target cuda --emit llvm",
                    "cjax: lower: --target cuda emits mlir, ptx or plan, not 'llvm'");
  // Even for a program that does not exist: the command line is wrong first.
  check_usage_error("residuals no_such.jaxpr --policy bogus2",
                    "cjax: residuals: unknown policy 'bogus2'; valid policies: "
                    "everything_saveable, nothing_saveable, dots_saveable, checkpoint_dots, "
                    "dots_with_no_batch_dims_saveable, checkpoint_dots_with_no_batch_dims, "
                    "save_anything_except_these_names, save_anything_but_these_names, "
                    "save_any_names_but_these, save_only_these_names, "
                    "offload_dot_with_no_batch_dims, save_and_offload_only_these_names");
}
