// Runs the cjax binary with arguments (and optional stdin text) and captures its exit code,
// stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_test {

struct Result {
  int code;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Result run_cli(const std::string& args, const std::string& stdin_text = "") {
  static int counter = 0;
  std::string base = std::string(CJAX_BINARY_DIR) + "/cli_test_" + std::to_string(getpid()) + "_" +
                     std::to_string(counter++);
  std::ofstream(base + ".in") << stdin_text;
  std::string cmd = std::string(CJAX_CLI_PATH) + " " + args + " <" + base + ".in >" + base +
                    ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(base + ".out"),
           slurp(base + ".err")};
  for (const char* ext : {".in", ".out", ".err"}) std::remove((base + ext).c_str());
  return r;
}

#ifdef CJAX_TEST_PLUGIN_DIR
// The path of a plugin that tests/cli/plugin/ builds: plugin_path("cjax_test_plugin").
inline std::string plugin_path(const std::string& name) {
  return std::string(CJAX_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}
#endif

}  // namespace cli_test
