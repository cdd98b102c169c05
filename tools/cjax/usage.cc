#include "tools/cjax/usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace cjax::cli {
namespace {

// An option, not a value: `-x…` or `--x…`, but not `-` (stdin) or a negative number.
bool is_option(const std::string& a) {
  if (a.size() < 2 || a[0] != '-') return false;
  return !(std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.');
}

const OptionSpec* find_option(const std::vector<OptionSpec>& options, const std::string& name) {
  for (const OptionSpec& o : options)
    if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
  return nullptr;
}

const CommandSpec* find_command(const std::vector<CommandSpec>& commands, const std::string& name) {
  for (const CommandSpec& c : commands)
    if (c.name == name) return &c;
  return nullptr;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The long option of `options` nearest to `name`, if it is a near miss (a typo).
std::string near_miss(const std::vector<OptionSpec>& options, const std::string& name) {
  std::string best;
  size_t best_distance = 3;  // at most two edits
  for (const OptionSpec& o : options)
    for (const std::string& n : o.names) {
      if (n.rfind("--", 0) != 0) continue;
      size_t d = edit_distance(name, n);
      if (d < best_distance) best_distance = d, best = n;
    }
  return best;
}

std::string unknown_option(const std::vector<CommandSpec>& commands, const CommandSpec& cmd,
                           const std::string& name) {
  std::vector<std::string> others;
  for (const CommandSpec& c : commands)
    if (&c != &cmd && find_option(c.options, name)) others.push_back(c.name);
  std::string hint = fmt::format("see cjax {} --help", cmd.name);
  if (!others.empty())
    return fmt::format("unknown option {}: it is an option of {} ({})", name,
                       fmt::join(others, ", "), hint);
  std::string near = near_miss(cmd.options, name);
  if (!near.empty())
    return fmt::format("unknown option {}; did you mean {}? ({})", name, near, hint);
  return fmt::format("unknown option {} ({})", name, hint);
}

// The option name of `a` (`--x` of `--x=v`, `-e` of `-eNAME`) and whether a value is attached.
std::pair<std::string, bool> option_name(const std::string& a) {
  if (a.rfind("--", 0) == 0) {
    size_t eq = a.find('=');
    return {a.substr(0, eq), eq != std::string::npos};
  }
  return {a.substr(0, 2), a.size() > 2};
}

std::vector<std::string> command_names(const std::vector<CommandSpec>& commands) {
  std::vector<std::string> names;
  for (const CommandSpec& c : commands) names.push_back(c.name);
  return names;
}

}  // namespace

std::string named_command(const std::vector<CommandSpec>& commands,
                          const std::vector<OptionSpec>& global,
                          const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_option(args[i])) return find_command(commands, args[i]) ? args[i] : "";
    auto [name, attached] = option_name(args[i]);
    const OptionSpec* o = find_option(global, name);
    if (o && o->takes_value && !attached) ++i;
  }
  return "";
}

std::optional<UsageProblem> check_command_line(const std::vector<CommandSpec>& commands,
                                               const std::vector<OptionSpec>& global,
                                               const std::vector<std::string>& args) {
  size_t i = 0;
  const CommandSpec* cmd = nullptr;
  for (; i < args.size() && !cmd; ++i) {
    if (!is_option(args[i])) {
      cmd = find_command(commands, args[i]);
      if (!cmd)
        return UsageProblem{"", fmt::format("unknown command '{}'; the commands are {} (see cjax "
                                            "--help)",
                                            args[i], fmt::join(command_names(commands), ", "))};
      continue;
    }
    auto [name, attached] = option_name(args[i]);
    const OptionSpec* o = find_option(global, name);
    if (!o) {
      std::vector<std::string> with;
      for (const CommandSpec& c : commands)
        if (find_option(c.options, name)) with.push_back(c.name);
      return UsageProblem{"", with.empty()
                                  ? fmt::format("unknown option {} (see cjax --help)", name)
                                  : fmt::format("{} is an option of {}: put it after the command",
                                                name, fmt::join(with, ", "))};
    }
    if (o->takes_value && !attached) ++i;
  }
  if (!cmd) return std::nullopt;  // no command: main.cc says which are there
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (!is_option(a)) continue;
    auto [name, attached] = option_name(a);
    const OptionSpec* o = find_option(cmd->options, name);
    if (!o) o = find_option(global, name);
    if (!o) return UsageProblem{cmd->name, unknown_option(commands, *cmd, name)};
    if (o->takes_value && !attached) {
      ++i;
    } else if (!o->takes_value && attached && a[1] != '-') {
      // Short flags run together (`-vh`): each letter must be a flag.
      for (size_t k = 2; k < a.size(); ++k) {
        std::string flag = std::string("-") + a[k];
        const OptionSpec* f = find_option(cmd->options, flag);
        if (!f) f = find_option(global, flag);
        if (!f || f->takes_value)
          return UsageProblem{cmd->name, unknown_option(commands, *cmd, flag)};
      }
    }
  }
  return std::nullopt;
}

std::string format_usage_error(const UsageProblem& p) {
  return p.command.empty() ? fmt::format("cjax: {}", p.message)
                           : fmt::format("cjax: {}: {}", p.command, p.message);
}

}  // namespace cjax::cli
