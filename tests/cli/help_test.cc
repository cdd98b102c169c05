// The CLI's face: golden --help output for every subcommand, --version, colour only when asked
// or on a terminal, fwd-bwd fitting the terminal, and a bash completion that knows every option.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>

#include "cjax/version.h"
#include "tests/cli/run_cli.h"

using cli_test::run_cli;

namespace {

const std::vector<std::string> kCommands = {"examples", "jaxpr", "residuals", "fwd-bwd", "grad",
                                            "run",      "lower", "bench",     "memory"};

std::string golden_path(const std::string& cmd) {
  return std::string(CJAX_SOURCE_DIR) + "/tests/cli/golden/help" + (cmd.empty() ? "" : "_") + cmd +
         ".txt";
}

// The long options a help text lists.
std::set<std::string> options_in(const std::string& help) {
  std::set<std::string> out;
  std::regex opt("--[a-z][a-z-]*");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), opt); it != std::sregex_iterator();
       ++it)
    out.insert(it->str());
  return out;
}

// Runs the bash completion for a command line (the last word is being completed).
std::string complete(const std::string& words) {
  std::string script = std::string(CJAX_SOURCE_DIR) + "/tools/cjax/completion/cjax.bash";
  std::string bin = std::string(CJAX_CLI_PATH);
  bin = bin.substr(0, bin.rfind('/'));
  std::string cmd = "PATH=\"" + bin + ":$PATH\" bash -c 'source " + script + "; COMP_WORDS=(" +
                    words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cjax; " +
                    "echo \"${COMPREPLY[*]}\"' > " + std::string(CJAX_BINARY_DIR) +
                    "/completion.out 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return cli_test::slurp(std::string(CJAX_BINARY_DIR) + "/completion.out");
}

}  // namespace

TEST_CASE("every subcommand's --help matches its golden text and shows an example") {
  bool update = std::getenv("CJAX_UPDATE_GOLDEN") != nullptr;
  std::vector<std::string> all = kCommands;
  all.insert(all.begin(), "");
  for (const std::string& cmd : all) {
    CAPTURE(cmd);
    auto r = run_cli(cmd + (cmd.empty() ? "" : " ") + "--help");
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    if (!cmd.empty()) CHECK(r.out.find("\nExample:\n  cjax " + cmd + " ") != std::string::npos);
    if (update) std::ofstream(golden_path(cmd)) << r.out;
    CHECK(r.out == cli_test::slurp(golden_path(cmd)));
  }
}

TEST_CASE("cjax --version prints the version, no subcommand is a usage error") {
  auto r = run_cli("--version");
  CHECK(r.code == 0);
  CHECK(r.out == std::string("cjax ") + CJAX_VERSION + "\n");
  auto none = run_cli("");
  CHECK(none.code == 2);
  CHECK(none.err.rfind("cjax: a command is required: examples, jaxpr, ", 0) == 0);
  CHECK(run_cli("jaxpr --example tutorial/f --layout stacked").code == 2);  // not jaxpr's option
  CHECK(run_cli("jaxpr --example tutorial/f --color=sometimes").code == 2);
}

TEST_CASE("jaxprs are coloured only on a terminal or with --color=always") {
  auto plain = run_cli("jaxpr -e tutorial/sin_sin");  // stdout is a file: auto means no colour
  CHECK(plain.out == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = sin b in (c,) }\n");
  CHECK(run_cli("jaxpr -e tutorial/sin_sin --color=never").out == plain.out);
  auto color = run_cli("jaxpr -e tutorial/sin_sin --color=always");
  const std::string kw = "\033[1m\033[34m", type = "\033[35m", reset = "\033[0m";
  CHECK(color.out == "{ " + kw + "lambda" + reset + " ; a" + type + ":f32[]" + reset + ". " + kw +
                         "let" + reset + " b" + type + ":f32[]" + reset + " = sin a; c" + type +
                         ":f32[]" + reset + " = sin b " + kw + "in" + reset + " (c,) }\n");
  // Without the escape codes it is the plain text.
  CHECK(std::regex_replace(color.out, std::regex("\033\\[[0-9]+m"), "") == plain.out);
}

TEST_CASE("fwd-bwd puts the programs side by side when they fit, else stacks them") {
  auto columns = run_cli("fwd-bwd -e tutorial/f --layout columns");
  auto stacked = run_cli("fwd-bwd -e tutorial/f --layout stacked");
  REQUIRE(columns.code == 0);
  REQUIRE(columns.out != stacked.out);
  CHECK(run_cli("fwd-bwd -e tutorial/f").out == columns.out);  // no terminal, no COLUMNS
  setenv("COLUMNS", "60", 1);
  auto narrow = run_cli("fwd-bwd -e tutorial/f");
  setenv("COLUMNS", "400", 1);
  auto wide = run_cli("fwd-bwd -e tutorial/f");
  unsetenv("COLUMNS");
  CHECK(narrow.out == stacked.out);
  CHECK(wide.out == columns.out);
}

TEST_CASE("the bash completion knows every subcommand and option") {
  std::string script =
      cli_test::slurp(std::string(CJAX_SOURCE_DIR) + "/tools/cjax/completion/cjax.bash");
  for (const std::string& cmd : kCommands) {
    CAPTURE(cmd);
    CHECK(complete("cjax " + cmd.substr(0, 3)).find(cmd) != std::string::npos);
    for (const std::string& opt : options_in(run_cli(cmd + " --help").out)) {
      CAPTURE(opt);
      CHECK(complete("cjax " + cmd + " " + opt).find(opt) != std::string::npos);
    }
  }
  CHECK(complete("cjax residuals --policy dots_w") == "dots_with_no_batch_dims_saveable\n");
  std::string examples = complete("cjax grad -e tutorial/f");
  CHECK(examples.find("tutorial/f2") != std::string::npos);
  CHECK(examples.find("block/mlp") == std::string::npos);
  CHECK(complete("cjax jaxpr -p " + std::string(CJAX_TEST_PLUGIN_DIR) +
                 "/libcjax_test_plugin.so -f mlp") == "mlp_loss\n");
}
