#include "tools/cjax/error_report.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <sstream>
#include <typeinfo>
#include <vector>

#include "ir/errors.h"
#include "ir/print/printer.h"
#include "tools/cjax/exit_codes.h"

namespace cjax::cli {
namespace {

// The CLI runs one command per process, so the detail lives in plain statics.
bool g_verbose = false;
std::string g_input_text;
std::string g_program;

constexpr size_t kMaxProgramLines = 40;

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : t.name();
}

// The input's line `line` and a caret under column `column` (both 1-based), indented by 4; empty
// when the input has no such line. Tabs before the column are kept so the caret lines up.
std::string caret_lines(const std::string& text, int line, int column) {
  std::vector<std::string> lines = split_lines(text);
  if (line < 1 || static_cast<size_t>(line) > lines.size() || column < 1) return "";
  const std::string& l = lines[line - 1];
  std::string pad;
  for (size_t i = 0; i + 1 < static_cast<size_t>(column) && i < l.size(); ++i)
    pad += l[i] == '\t' ? '\t' : ' ';
  return fmt::format("    {}\n    {}^\n", l, pad);
}

// Prints the one line, and with --verbose the detail; returns `code`.
int report(std::ostream& err, const std::string& context, ExitCode code, const std::string& what,
           const std::exception* e) {
  std::vector<std::string> lines = split_lines(what);
  err << "cjax: " << context << ": " << (lines.empty() ? std::string() : lines[0]) << "\n";
  if (!g_verbose) return code;
  err << "  error type: " << (e ? type_name(typeid(*e)) : std::string("unknown")) << "\n";
  for (size_t i = 1; i < lines.size(); ++i) err << "  " << lines[i] << "\n";
  if (const auto* p = dynamic_cast<const ParseError*>(e)) {
    std::string caret = caret_lines(g_input_text, p->line, p->column);
    if (!caret.empty())
      err << fmt::format("  at line {}, column {}:\n", p->line, p->column) << caret;
  }
  if (!g_program.empty()) {
    std::vector<std::string> prog = split_lines(g_program);
    err << "  the program:\n";
    for (size_t i = 0; i < prog.size() && i < kMaxProgramLines; ++i)
      err << "    " << prog[i] << "\n";
    if (prog.size() > kMaxProgramLines)
      err << fmt::format("    ... ({} more lines)\n", prog.size() - kMaxProgramLines);
  }
  return code;
}

}  // namespace

void set_verbose_errors(bool on) {
  g_verbose = on;
}

bool verbose_errors() {
  return g_verbose;
}

void note_input_text(const std::string& text) {
  if (g_verbose) g_input_text = text;
}

void note_program(const Jaxpr& j) {
  if (g_verbose) g_program = to_string(j);
}

int report_current_exception(std::ostream& err, const std::string& context) {
  try {
    throw;
  } catch (const UsageError& e) {
    return report(err, context, kUsage, e.what(), &e);
  } catch (const Error& e) {  // bad input, or input that asks for what cjax does not support
    return report(err, context, kUserError, e.what(), &e);
  } catch (const std::exception& e) {
    return report(err, context, kInternal,
                  fmt::format("internal error (please report it): {}", e.what()), &e);
  } catch (...) {
    return report(err, context, kInternal,
                  "internal error (please report it): an exception that is not a std::exception",
                  nullptr);
  }
}

}  // namespace cjax::cli
