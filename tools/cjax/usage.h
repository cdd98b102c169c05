// The command line checked before CLI11 parses it, so that a usage error names the real problem.
// CLI11 alone takes the value of an unknown option for the positional FILE (`grad -p lib.so -f f
// --wrt W1` reads as "--plugin excludes file") and calls an unknown command a missing one. Free of
// CLI11: main.cc describes the commands' options as CommandSpecs.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cjax::cli {

struct OptionSpec {
  std::vector<std::string> names;  // "--seed", "-r"
  bool takes_value = false;        // its value is the next argument (or after `=`)
};

struct CommandSpec {
  std::string name;
  std::vector<OptionSpec> options;
};

// A usage error: the command it concerns (empty when none was named yet) and the message.
struct UsageProblem {
  std::string command, message;
};

// The first unknown command or option in `args` (argv without the program name), with the
// commands that do have such an option, or a near miss (`--sed`: did you mean --seed?). `global`
// are the options accepted before and after the command (--verbose, --help, --version). Values
// of options and positionals are skipped; so is everything after `--`.
std::optional<UsageProblem> check_command_line(const std::vector<CommandSpec>& commands,
                                               const std::vector<OptionSpec>& global,
                                               const std::vector<std::string>& args);

// The command `args` names (its first argument that is not a global option), or "".
std::string named_command(const std::vector<CommandSpec>& commands,
                          const std::vector<OptionSpec>& global,
                          const std::vector<std::string>& args);

// "cjax: grad: unknown option --bogus (see cjax grad --help)", and "cjax: <message>" without a
// command.
std::string format_usage_error(const UsageProblem& p);

}  // namespace cjax::cli
