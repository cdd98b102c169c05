// How the CLI reports an error: one line `cjax: <where>: <message>` on standard error and the
// exit code of exit_codes.h; with --verbose, the detail after that line (the exception's type,
// the rest of a multi-line message, the offending input line with a caret under a parse error's
// column, and the program the command was working on).
#pragma once

#include <ostream>
#include <string>

#include "ir/jaxpr.h"

namespace cjax::cli {

// --verbose: errors print their detail after the one line.
void set_verbose_errors(bool on);
bool verbose_errors();

// What the detail can show, recorded by load_jaxpr: the text being read (jaxpr text or JSON),
// and the program once it is read or traced. Both are kept only while verbose_errors() is on.
void note_input_text(const std::string& text);
void note_program(const Jaxpr& j);

// Reports the exception being handled (call it inside a catch block) as described above, and
// returns its exit code: 2 for a UsageError, 1 for any other cjax::Error, 3 for anything else.
int report_current_exception(std::ostream& err, const std::string& context);

}  // namespace cjax::cli
